/* Times one entry of a compiled model through libdlcrt's C API, for the
 * GPU benchmarks (bench/gpu/make_bench.py builds one per model; the machine
 * that runs it needs no compiler). The model is chosen at compile time:
 *
 *   cc -D_POSIX_C_SOURCE=200809L -include model.h \
 *      -DDLC_BENCH_MODEL=dlc_model_<name> step_bench.c model.o -ldlcrt -lm
 *
 *   step_bench [--device auto|cpu|cuda] [--entry NAME] [--seed N]
 *              [--warmup N] [--runs N] [--pageable]
 *
 * The params come from dlc_model_init(seed); float inputs hold a fixed
 * pattern in [-1, 1], integer inputs (labels) zeros. Inputs and outputs
 * live in the model's host memory (dlc_model_alloc_host: pinned on CUDA,
 * as PyTorch's side pins its batch), unless --pageable asks for malloc'd
 * buffers (then every run copies them through the runtime's staging
 * buffer too). The entry (default
 * `train_step`) runs `warmup` times (at least 2: on CUDA the second run is
 * captured as a CUDA graph), then `runs` timed times, each a whole
 * dlc_model_run: inputs in, the step, outputs out, one stream sync (on
 * CUDA one graph, copies included); then one unrecorded and `runs`
 * recorded more with the entry alone measured (dlc_model_measure_entries:
 * on CUDA, events around a graph of the entry alone, which the unrecorded
 * run captures). Prints
 *
 *   step_bench: MODEL ENTRY on DEVICE: min X us, median Y us, N runs,
 *       pinned|pageable buffers[, loss L]
 *   step_bench: MODEL ENTRY on DEVICE: entry alone: min X us, median Y us
 *
 * Exit status: 0 on success, 1 on a runtime error, 2 on a usage error. */
#include <dlc/dlc_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef DLC_BENCH_MODEL
#error "compile with -include MODEL.h -DDLC_BENCH_MODEL=dlc_model_<name>"
#endif

static int fail(const char *what, dlc_status st) {
  fprintf(stderr, "step_bench: %s: %s: %s\n", what, dlc_status_name(st),
          dlc_last_error());
  return 1;
}

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "step_bench: usage error: %s%s\n", msg, arg ? arg : "");
  return 2;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int64_t elements(const dlc_tensor_info *t) {
  int64_t n = 1;
  int32_t d;
  for (d = 0; d < t->rank; ++d)
    n *= t->shape[d];
  return n;
}

/* A fixed pattern in [-1, 1] for float inputs (fp32 only: the entries of a
 * dlc training step take fp32 data), zeros for the others. */
static void fill_input(void *data, const dlc_tensor_info *t) {
  int64_t i, n = elements(t);
  memset(data, 0, (size_t)(n * dlc_dtype_size(t->dtype)));
  if (t->dtype == DLC_F32)
    for (i = 0; i < n; ++i)
      ((float *)data)[i] = (float)sin(0.37 * (double)(i % 100003));
}

int main(int argc, char **argv) {
  dlc_device_kind device = DLC_DEVICE_AUTO;
  const char *entry_name = "train_step";
  unsigned long long seed = 0;
  long warmup = 3, runs = 20, r;
  dlc_model *model = NULL;
  void **buffers = NULL;
  double *times = NULL, *entry_times = NULL;
  int32_t entry, ni = 0, no = 0, k, loss = -1;
  dlc_tensor_info info;
  dlc_status st;
  int rc = 1, i, pageable = 0;

  for (i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--pageable") == 0) {
      pageable = 1;
      continue;
    }
    if (!v)
      return usage("missing value after ", a);
    ++i;
    if (strcmp(a, "--device") == 0) {
      if (strcmp(v, "auto") == 0)
        device = DLC_DEVICE_AUTO;
      else if (strcmp(v, "cpu") == 0)
        device = DLC_DEVICE_CPU;
      else if (strcmp(v, "cuda") == 0)
        device = DLC_DEVICE_CUDA;
      else
        return usage("--device wants auto, cpu or cuda, not ", v);
    } else if (strcmp(a, "--entry") == 0) {
      entry_name = v;
    } else if (strcmp(a, "--seed") == 0) {
      seed = strtoull(v, NULL, 10);
    } else if (strcmp(a, "--warmup") == 0) {
      warmup = strtol(v, NULL, 10);
    } else if (strcmp(a, "--runs") == 0) {
      runs = strtol(v, NULL, 10);
    } else {
      return usage("unknown option ", a);
    }
  }
  if (warmup < 2 || runs < 1)
    return usage("want --warmup >= 2 and --runs >= 1", NULL);

  if ((st = dlc_model_create(&DLC_BENCH_MODEL, device, &model)) != DLC_OK)
    return fail("create", st);
  if ((st = dlc_model_init(model, (uint64_t)seed)) != DLC_OK) {
    fail("init", st);
    goto done;
  }
  if ((entry = dlc_model_find_entry(model, entry_name)) < 0) {
    fprintf(stderr, "step_bench: the model has no entry '%s'\n", entry_name);
    goto done;
  }
  ni = dlc_model_entry_num_inputs(model, entry);
  no = dlc_model_entry_num_outputs(model, entry);
  buffers = (void **)calloc((size_t)(ni + no) + 1, sizeof(*buffers));
  times = (double *)calloc((size_t)runs, sizeof(*times));
  entry_times = (double *)calloc((size_t)runs, sizeof(*entry_times));
  if (!buffers || !times || !entry_times) {
    fprintf(stderr, "step_bench: out of memory\n");
    goto done;
  }
  for (k = 0; k < ni + no; ++k) {
    st = k < ni ? dlc_model_entry_input_info(model, entry, k, &info)
                : dlc_model_entry_output_info(model, entry, k - ni, &info);
    if (st != DLC_OK) {
      fail("tensor info", st);
      goto done;
    }
    size_t bytes = (size_t)(elements(&info) * dlc_dtype_size(info.dtype)) + 1;
    if (pageable) {
      if (!(buffers[k] = malloc(bytes))) {
        fprintf(stderr, "step_bench: out of memory\n");
        goto done;
      }
    } else if ((st = dlc_model_alloc_host(model, bytes, &buffers[k])) !=
               DLC_OK) {
      fail("host memory", st);
      goto done;
    }
    if (k < ni)
      fill_input(buffers[k], &info);
    else if (strcmp(info.name, "loss") == 0 && info.rank == 0 &&
             info.dtype == DLC_F32)
      loss = k;
  }
  for (r = 0; r < warmup + runs; ++r) {
    double start = now_us();
    if ((st = dlc_model_run(model, entry, (const void *const *)buffers,
                            buffers + ni)) != DLC_OK) {
      fail("run", st);
      goto done;
    }
    if (r >= warmup)
      times[r - warmup] = now_us() - start;
  }
  qsort(times, (size_t)runs, sizeof(*times), compare_doubles);
  if ((st = dlc_model_measure_entries(model, 1)) != DLC_OK) {
    fail("measure", st);
    goto done;
  }
  /* One measured run first, unrecorded: a measured run replays a graph of
   * the entry alone, which that run captures. */
  for (r = -1; r < runs; ++r) {
    if ((st = dlc_model_run(model, entry, (const void *const *)buffers,
                            buffers + ni)) != DLC_OK) {
      fail("run", st);
      goto done;
    }
    if (r >= 0)
      entry_times[r] = dlc_model_last_entry_us(model);
  }
  qsort(entry_times, (size_t)runs, sizeof(*entry_times), compare_doubles);
  printf("step_bench: %s %s on %s: min %.1f us, median %.1f us, %ld runs, "
         "%s buffers",
         dlc_model_name(model), entry_name, dlc_model_device_name(model),
         times[0], times[runs / 2], runs, pageable ? "pageable" : "pinned");
  if (loss >= 0)
    printf(", loss %.6g", (double)*(const float *)buffers[loss]);
  printf("\n");
  printf("step_bench: %s %s on %s: entry alone: min %.1f us, median %.1f us\n",
         dlc_model_name(model), entry_name, dlc_model_device_name(model),
         entry_times[0], entry_times[runs / 2]);
  rc = 0;
done:
  if (buffers)
    for (k = 0; k < ni + no; ++k) {
      if (pageable)
        free(buffers[k]);
      else
        dlc_model_free_host(model, buffers[k]);
    }
  free(buffers);
  free(times);
  free(entry_times);
  dlc_model_destroy(model);
  return rc;
}
