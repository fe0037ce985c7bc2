/* A small program that uses the compiled digits model through its generated
 * header: create the model (the runtime picks the device), initialise the
 * weights from a seed (or load them from a file), run a forward pass on a
 * batch and print the predicted classes. */
#include "digits.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  digits_model *model = NULL;
  if (digits_create(DLC_DEVICE_AUTO, &model) != DLC_OK) {
    fprintf(stderr, "create failed: %s\n", dlc_last_error());
    return 1;
  }
  dlc_status st =
      argc > 1 ? digits_load(model, argv[1]) : digits_init(model, 0);
  if (st != DLC_OK) {
    fprintf(stderr, "weights: %s\n", dlc_last_error());
    digits_destroy(model);
    return 1;
  }
  /* The device the runtime picked and, when it could not use the GPU, why. */
  printf("device: %s", dlc_model_device_name(model));
  if (*dlc_model_fallback_reason(model))
    printf(" (CUDA not used: %s)", dlc_model_fallback_reason(model));
  printf("\n");
  printf("weights: %s\n", argc > 1 ? argv[1] : "seed 0 (untrained)");

  /* A deterministic batch of "images". */
  static float x[DIGITS_FORWARD_X_NUMEL];
  static float logits[DIGITS_FORWARD_LOGITS_NUMEL];
  for (long i = 0; i < DIGITS_FORWARD_X_NUMEL; ++i)
    x[i] = (float)((i * 7919) % 255) / 255.0f;

  if (digits_forward(model, x, logits) != DLC_OK) {
    fprintf(stderr, "forward failed: %s\n", dlc_last_error());
    digits_destroy(model);
    return 1;
  }
  long batch = DIGITS_FORWARD_LOGITS_NUMEL / 10;
  for (long n = 0; n < batch && n < 4; ++n) {
    int best = 0;
    for (int c = 1; c < 10; ++c)
      if (logits[n * 10 + c] > logits[n * 10 + best])
        best = c;
    printf("sample %ld: logits[0..2] = %.6f %.6f %.6f  predicted class %d\n", n,
           logits[n * 10], logits[n * 10 + 1], logits[n * 10 + 2], best);
  }
  digits_destroy(model);
  return 0;
}
