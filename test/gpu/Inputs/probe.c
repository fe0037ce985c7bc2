/* The GPU suite's device probe: whether libdlcrt can use CUDA here, and if
 * not, why (dlc_cuda_available). Prints one line; exit status 0 when CUDA is
 * usable, 1 when it is not. */
#include <dlc/dlc_runtime.h>

#include <stdio.h>

int main(void) {
  char reason[512];
  if (dlc_cuda_available(reason, sizeof(reason))) {
    printf("cuda: usable\n");
    return 0;
  }
  printf("cuda: unusable: %s\n", reason);
  return 1;
}
