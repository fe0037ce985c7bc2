/* memory_check.c: the memory a compiled model takes at run time against its
 * compile-time plan. Built with -DMODEL=<name> -DMODEL_UPPER=<NAME> and the
 * model's header; runs every entry on zero-filled buffers and prints
 *
 *   plan N runtime M            NAME_MEMORY_BYTES and dlc_model_memory_bytes
 *   workspace W runtime V       the largest entry workspace, both ways
 *   ran ENTRY                   for each entry
 *   scratch in use U peak P bound B
 *
 * where U is what libdlcrt's workspace allocator still has out after the
 * calls (0: nothing leaks) and P its peak: only the matmul kernels' packing
 * buffers, at most 256 KiB per thread (B). */
#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#include STR(MODEL.h)

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  dlc_model *m = NULL;
  int32_t e, i;
  int64_t ws = 0, cur = 0, peak = 0, bound;
  if (dlc_model_create(&CAT(dlc_model_, MODEL), DLC_DEVICE_CPU, &m) != DLC_OK ||
      dlc_model_init(m, 0) != DLC_OK) {
    fprintf(stderr, "create: %s\n", dlc_last_error());
    return 1;
  }
  printf("plan %lld runtime %lld\n", (long long)CAT(MODEL_UPPER, _MEMORY_BYTES),
         (long long)dlc_model_memory_bytes(m));
#define WS(E) (ws = CAT(MODEL_UPPER, E) > ws ? CAT(MODEL_UPPER, E) : ws)
  WS(_FORWARD_WORKSPACE_BYTES);
#ifdef HAS_TRAIN
  WS(_TRAIN_STEP_WORKSPACE_BYTES);
#endif
  printf("workspace %lld runtime %lld\n", (long long)((ws + 63) / 64 * 64),
         (long long)dlc_model_workspace_bytes(m));
  for (e = 0; e < dlc_model_num_entries(m); ++e) {
    const void *in[16];
    void *out[16];
    int32_t nin = dlc_model_entry_num_inputs(m, e);
    int32_t nout = dlc_model_entry_num_outputs(m, e);
    for (i = 0; i < nin; ++i) {
      dlc_tensor_info t;
      dlc_model_entry_input_info(m, e, i, &t);
      in[i] = calloc(1, (size_t)t.nbytes + 1);
    }
    for (i = 0; i < nout; ++i) {
      dlc_tensor_info t;
      dlc_model_entry_output_info(m, e, i, &t);
      out[i] = calloc(1, (size_t)t.nbytes + 1);
    }
    if (dlc_model_run(m, e, in, out) != DLC_OK) {
      fprintf(stderr, "run: %s\n", dlc_last_error());
      return 1;
    }
    printf("ran %s\n", dlc_model_entry_name(m, e));
    for (i = 0; i < nin; ++i)
      free((void *)in[i]);
    for (i = 0; i < nout; ++i)
      free(out[i]);
  }
  dlc_workspace_usage(&cur, &peak);
  bound = (int64_t)dlc_num_threads() * 256 * 1024;
  printf("scratch in use %lld peak %s bound\n", (long long)cur,
         peak <= bound ? "within" : "OVER");
  dlc_model_destroy(m);
  return 0;
}
