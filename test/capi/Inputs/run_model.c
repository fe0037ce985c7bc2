/* A generic runner of a compiled model, through libdlcrt's generic C API
 * only (dlc_model_create / dlc_model_load / dlc_model_run, dlc_io.h for the
 * tensor files). The model is chosen at compile time:
 *
 *   dlc model.dlc -o model.o
 *   cc -include model.h -DDLC_TEST_MODEL=dlc_model_<name> run_model.c model.o
 *      -ldlcrt -o run_model
 *
 *   run_model [--device auto|cpu|cuda] [--entry NAME] [--seed N]
 *             [WEIGHTS.safetensors] NAME=IN.npy ... [--out NAME=OUT.npy ...]
 *             [--out OUT.npy] [--steps N] [--print-loss] [--save CKPT]
 *
 * Every input of the entry (default `forward`) must be given once as
 * NAME=FILE.npy, with exactly the input's dtype and shape; each --out writes
 * one output as .npy (`--out FILE.npy`: the entry's only output). The params
 * are loaded from WEIGHTS, or set by dlc_model_init with --seed. --steps
 * runs the entry N times (a training step: N steps on the same batch);
 * --print-loss prints `step N loss X` after each, from the scalar output
 * `loss`, as `dlc run --print-loss` does; --save writes the params (and
 * optimizer state) at the end. The inputs are copied into the model's host
 * memory (dlc_model_alloc_host); the outputs are ordinary memory: on CUDA
 * a run copies the one directly and the other through the runtime's
 * staging buffer. Exit status: 0 on success, 1 on a runtime
 * error (the message on stderr), 2 on a usage error. */
#include <dlc/dlc_io.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DLC_TEST_MODEL
#error "compile with -include MODEL.h -DDLC_TEST_MODEL=dlc_model_<name>"
#endif

static int fail(const char *what, dlc_status st) {
  fprintf(stderr, "error: %s: %s: %s\n", what, dlc_status_name(st),
          dlc_last_error());
  return 1;
}

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "usage error: %s%s\n", msg, arg ? arg : "");
  return 2;
}

static int same_type(const dlc_tensor_info *a, const dlc_tensor_info *b) {
  int32_t d;
  if (a->dtype != b->dtype || a->rank != b->rank)
    return 0;
  for (d = 0; d < a->rank; ++d)
    if (a->shape[d] != b->shape[d])
      return 0;
  return 1;
}

static void print_type(FILE *f, const dlc_tensor_info *t) {
  int32_t d;
  fprintf(f, "%s[", dlc_dtype_name(t->dtype));
  for (d = 0; d < t->rank; ++d)
    fprintf(f, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
  fprintf(f, "]");
}

/* The FILE of the first "NAME=FILE" of `specs` whose NAME is `name`. */
static const char *find_spec(const char **specs, int n, const char *name) {
  int i;
  size_t len = strlen(name);
  for (i = 0; i < n; ++i)
    if (strncmp(specs[i], name, len) == 0 && specs[i][len] == '=')
      return specs[i] + len + 1;
  return NULL;
}

int main(int argc, char **argv) {
  dlc_device_kind device = DLC_DEVICE_AUTO;
  const char *entry_name = "forward", *weights = NULL;
  const char **in_specs = NULL, **out_specs = NULL;
  int num_in_specs = 0, num_out_specs = 0, use_seed = 0, rc = 1, i;
  int steps = 1, print_loss = 0, step;
  const char *save = NULL;
  unsigned long long seed = 0;
  dlc_model *model = NULL;
  dlc_comm *comm = NULL;
  dlc_tensor_list **in_lists = NULL, *outs = NULL, *one = NULL;
  const void **inputs = NULL;
  void **outputs = NULL;
  int32_t entry, ni = 0, no = 0, k;
  dlc_tensor_info info, want;
  dlc_status st;

  in_specs = (const char **)calloc((size_t)argc, sizeof(*in_specs));
  out_specs = (const char **)calloc((size_t)argc, sizeof(*out_specs));
  if (!in_specs || !out_specs) {
    fprintf(stderr, "error: out of memory\n");
    goto done;
  }
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--print-loss") == 0) {
      print_loss = 1;
    } else if (strcmp(a, "--device") == 0 || strcmp(a, "--entry") == 0 ||
               strcmp(a, "--seed") == 0 || strcmp(a, "--out") == 0 ||
               strcmp(a, "--steps") == 0 || strcmp(a, "--save") == 0) {
      const char *v = i + 1 < argc ? argv[++i] : NULL;
      if (!v) {
        rc = usage("missing value after ", a);
        goto done;
      }
      if (strcmp(a, "--entry") == 0) {
        entry_name = v;
      } else if (strcmp(a, "--steps") == 0) {
        steps = atoi(v);
        if (steps < 1) {
          rc = usage("--steps wants a positive count, not ", v);
          goto done;
        }
      } else if (strcmp(a, "--save") == 0) {
        save = v;
      } else if (strcmp(a, "--seed") == 0) {
        seed = strtoull(v, NULL, 10);
        use_seed = 1;
      } else if (strcmp(a, "--out") == 0) {
        out_specs[num_out_specs++] = v;
      } else if (strcmp(v, "auto") == 0) {
        device = DLC_DEVICE_AUTO;
      } else if (strcmp(v, "cpu") == 0) {
        device = DLC_DEVICE_CPU;
      } else if (strcmp(v, "cuda") == 0) {
        device = DLC_DEVICE_CUDA;
      } else {
        rc = usage("unknown device ", v);
        goto done;
      }
    } else if (strchr(a, '=')) {
      in_specs[num_in_specs++] = a;
    } else if (!weights) {
      weights = a;
    } else {
      rc = usage("unexpected argument ", a);
      goto done;
    }
  }
  if (!weights == !use_seed) {
    rc = usage("give either a weights file or --seed", NULL);
    goto done;
  }

  if ((st = dlc_model_create(&DLC_TEST_MODEL, device, &model)) != DLC_OK) {
    rc = fail("create", st);
    goto done;
  }
  printf("model %s on %s", dlc_model_name(model),
         dlc_device_name(dlc_model_device(model)));
  if (*dlc_model_fallback_reason(model))
    printf(" (CUDA not used: %s)", dlc_model_fallback_reason(model));
  printf("\n");
  /* The compilation of the CPU code the runtime picked for this CPU. */
  if (dlc_model_device(model) == DLC_DEVICE_CPU)
    fprintf(stderr, "using cpu: %s\n", dlc_model_cpu_name(model));
  st = use_seed ? dlc_model_init(model, (uint64_t)seed)
                : dlc_model_load(model, weights);
  if (st != DLC_OK) {
    rc = fail(use_seed ? "init" : "load weights", st);
    goto done;
  }

  if ((entry = dlc_model_find_entry(model, entry_name)) < 0) {
    rc = fail("entry", DLC_ERR_INVALID_ARGUMENT);
    goto done;
  }
  /* A data-parallel step (compiled with --data-parallel=N) runs in the job
   * the process was started in: alone, a job of one rank. */
  if (dlc_model_entry_uses_comm(model, entry) == 1) {
    if ((st = dlc_comm_create_mpi(&comm)) != DLC_OK) {
      rc = fail("join the job", st);
      goto done;
    }
    if ((st = dlc_model_set_comm(model, comm)) != DLC_OK) {
      rc = fail("set the communicator", st);
      goto done;
    }
  }
  ni = dlc_model_entry_num_inputs(model, entry);
  no = dlc_model_entry_num_outputs(model, entry);
  in_lists = (dlc_tensor_list **)calloc((size_t)ni + 1, sizeof(*in_lists));
  inputs = (const void **)calloc((size_t)ni + 1, sizeof(*inputs));
  outputs = (void **)calloc((size_t)no + 1, sizeof(*outputs));
  if (ni < 0 || no < 0 || !in_lists || !inputs || !outputs) {
    fprintf(stderr, "error: cannot set up entry %s\n", entry_name);
    goto done;
  }

  /* Inputs: one .npy file each, of exactly the declared dtype and shape. */
  for (k = 0; k < ni; ++k) {
    const char *path;
    if ((st = dlc_model_entry_input_info(model, entry, k, &want)) != DLC_OK) {
      rc = fail("input info", st);
      goto done;
    }
    if (!(path = find_spec(in_specs, num_in_specs, want.name))) {
      rc = usage("missing input ", want.name);
      goto done;
    }
    if ((st = dlc_tensor_file_read(path, DLC_FILE_NPY, &in_lists[k])) !=
            DLC_OK ||
        (st = dlc_tensor_list_get(in_lists[k], 0, &info)) != DLC_OK) {
      rc = fail(path, st);
      goto done;
    }
    if (!same_type(&info, &want)) {
      fprintf(stderr, "error: input %s: %s is ", want.name, path);
      print_type(stderr, &info);
      fprintf(stderr, ", the entry wants ");
      print_type(stderr, &want);
      fprintf(stderr, "\n");
      goto done;
    }
    /* In the model's host memory (pinned on CUDA: copied to the device
     * directly); the outputs below stay in ordinary memory. */
    if ((st = dlc_model_alloc_host(model, (size_t)info.nbytes,
                                   (void **)&inputs[k])) != DLC_OK) {
      rc = fail("input memory", st);
      goto done;
    }
    memcpy((void *)inputs[k], info.data, (size_t)info.nbytes);
  }
  for (i = 0; i < num_in_specs; ++i) {
    int known = 0;
    for (k = 0; k < ni && !known; ++k)
      known = dlc_model_entry_input_info(model, entry, k, &want) == DLC_OK &&
              strncmp(in_specs[i], want.name, strlen(want.name)) == 0 &&
              in_specs[i][strlen(want.name)] == '=';
    if (!known) {
      rc = usage("not an input of the entry: ", in_specs[i]);
      goto done;
    }
  }

  /* Outputs: zero-filled buffers owned by a tensor list. */
  if ((st = dlc_tensor_list_create(&outs)) != DLC_OK) {
    rc = fail("output list", st);
    goto done;
  }
  for (k = 0; k < no; ++k) {
    if ((st = dlc_model_entry_output_info(model, entry, k, &want)) != DLC_OK ||
        (st = dlc_tensor_list_add(outs, want.name, want.dtype, want.rank,
                                  want.shape, NULL, NULL)) != DLC_OK ||
        (st = dlc_tensor_list_get(outs, k, &info)) != DLC_OK) {
      rc = fail("output buffer", st);
      goto done;
    }
    outputs[k] = info.data;
  }

  for (step = 1; step <= steps; ++step) {
    int32_t loss;
    if ((st = dlc_model_run(model, entry, inputs, outputs)) != DLC_OK) {
      rc = fail("run", st);
      goto done;
    }
    if (print_loss && (loss = dlc_tensor_list_find(outs, "loss")) >= 0 &&
        dlc_tensor_list_get(outs, loss, &info) == DLC_OK &&
        info.dtype == DLC_F32 && info.rank == 0)
      printf("step %d loss %.9g\n", step, (double)*(const float *)info.data);
  }
  if (save && (st = dlc_model_save(model, save)) != DLC_OK) {
    rc = fail(save, st);
    goto done;
  }

  /* Each requested output as a one-tensor .npy file. */
  for (i = 0; i < num_out_specs; ++i) {
    const char *eq = strchr(out_specs[i], '='), *path;
    char name[256];
    int32_t idx;
    if (!eq) {
      /* FILE.npy: the entry's only output. */
      if (no != 1) {
        rc = usage("--out FILE needs an entry with one output: ", out_specs[i]);
        goto done;
      }
      if ((st = dlc_model_entry_output_info(model, entry, 0, &want)) !=
          DLC_OK) {
        rc = fail("output info", st);
        goto done;
      }
      snprintf(name, sizeof(name), "%s", want.name);
      path = out_specs[i];
    } else {
      size_t len = (size_t)(eq - out_specs[i]);
      if (len >= sizeof(name)) {
        rc = usage("output name too long: ", out_specs[i]);
        goto done;
      }
      memcpy(name, out_specs[i], len);
      name[len] = '\0';
      path = eq + 1;
    }
    if ((idx = dlc_tensor_list_find(outs, name)) < 0) {
      rc = usage("not an output of the entry: ", name);
      goto done;
    }
    if ((st = dlc_tensor_list_get(outs, idx, &info)) != DLC_OK ||
        (st = dlc_tensor_list_create(&one)) != DLC_OK ||
        (st = dlc_tensor_list_add(one, name, info.dtype, info.rank, info.shape,
                                  info.data, NULL)) != DLC_OK ||
        (st = dlc_tensor_file_write(path, DLC_FILE_NPY, one)) != DLC_OK) {
      rc = fail(path, st);
      goto done;
    }
    dlc_tensor_list_free(one);
    one = NULL;
    printf("wrote %s ", name);
    print_type(stdout, &info);
    printf(" to %s\n", path);
  }
  rc = 0;

done:
  dlc_tensor_list_free(one);
  dlc_tensor_list_free(outs);
  if (in_lists)
    for (k = 0; k < ni; ++k)
      dlc_tensor_list_free(in_lists[k]);
  free(in_lists);
  free((void *)inputs);
  free(outputs);
  free(in_specs);
  free(out_specs);
  dlc_model_destroy(model);
  dlc_comm_destroy(comm);
  return rc;
}
