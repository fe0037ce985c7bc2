/* Calls of one model's forward entry from several threads at once, and of
 * two models side by side, against each input's result computed alone: every
 * result must be bit-exact (run_concurrent.test). */
#include "digits.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kThreads = 4, kCalls = 40, kIn = 64 * 784, kOut = 64 * 10 };

static float inputs[kThreads][kIn];
static float alone[kThreads][kOut];
static digits_model *models[2];
static int wrong[kThreads];

struct job {
  int thread;
  digits_model *model;
};

static void *run_forwards(void *arg) {
  const struct job *j = arg;
  float out[kOut];
  for (int i = 0; i < kCalls; ++i)
    if (digits_forward(j->model, inputs[j->thread], out) != DLC_OK ||
        memcmp(out, alone[j->thread], sizeof(out)) != 0)
      ++wrong[j->thread];
  return NULL;
}

static int check(const char *what, digits_model *a, digits_model *b) {
  pthread_t threads[kThreads];
  struct job jobs[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    wrong[t] = 0;
    jobs[t].thread = t;
    jobs[t].model = t % 2 ? b : a;
    pthread_create(&threads[t], NULL, run_forwards, &jobs[t]);
  }
  int total = 0;
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    total += wrong[t];
  }
  printf("%s: %d of %d results differ from the single-threaded ones\n", what,
         total, kThreads * kCalls);
  return total;
}

int main(void) {
  unsigned seed = 12345;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kIn; ++i) {
      seed = seed * 1103515245u + 12345u;
      inputs[t][i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
  for (int k = 0; k < 2; ++k)
    if (digits_create(DLC_DEVICE_CPU, &models[k]) != DLC_OK ||
        digits_init(models[k], 7) != DLC_OK) {
      fprintf(stderr, "error: %s\n", dlc_last_error());
      return 1;
    }
  for (int t = 0; t < kThreads; ++t)
    if (digits_forward(models[0], inputs[t], alone[t]) != DLC_OK) {
      fprintf(stderr, "error: %s\n", dlc_last_error());
      return 1;
    }
  int bad = check("one model, 4 threads", models[0], models[0]);
  bad += check("two models, 2 threads each", models[0], models[1]);
  for (int k = 0; k < 2; ++k)
    digits_destroy(models[k]);
  return bad != 0;
}
