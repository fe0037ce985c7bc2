// The generated header used from C++: the typed wrappers, the C linkage of
// the descriptor, NAME_init and NAME_save.
//   header_cxx X.npy LOGITS.npy SAVED.safetensors
// initialises the digits model with seed 7, saves its weights, runs forward
// on X and writes the logits.
#include "digits.h"

#include <dlc/dlc_io.h>

#include <cstdio>
#include <vector>

namespace {
int fail(const char *what, dlc_status st) {
  std::fprintf(stderr, "error: %s: %s: %s\n", what, dlc_status_name(st),
               dlc_last_error());
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  digits_model *model = nullptr;
  dlc_tensor_list *in = nullptr, *out = nullptr;
  dlc_tensor_info x;
  std::vector<float> logits(DIGITS_FORWARD_LOGITS_NUMEL);
  const int64_t shape[2] = {DIGITS_FORWARD_LOGITS_NUMEL / 10, 10};
  dlc_status st;
  int rc = 1;
  if ((st = digits_create(DLC_DEVICE_CPU, &model)) != DLC_OK)
    return fail("create", st);
  if ((st = digits_init(model, 7)) != DLC_OK) {
    rc = fail("init", st);
  } else if ((st = digits_save(model, argv[3])) != DLC_OK) {
    rc = fail("save", st);
  } else if ((st = dlc_tensor_file_read(argv[1], DLC_FILE_AUTO, &in)) !=
                 DLC_OK ||
             (st = dlc_tensor_list_get(in, 0, &x)) != DLC_OK) {
    rc = fail("read", st);
  } else if (x.dtype != DLC_F32 || x.numel != DIGITS_FORWARD_X_NUMEL) {
    std::fprintf(stderr, "error: bad input\n");
  } else if ((st = digits_forward(model, static_cast<const float *>(x.data),
                                  logits.data())) != DLC_OK) {
    rc = fail("forward", st);
  } else if ((st = dlc_tensor_list_create(&out)) != DLC_OK ||
             (st = dlc_tensor_list_add(out, "logits", DLC_F32, 2, shape,
                                       logits.data(), nullptr)) != DLC_OK ||
             (st = dlc_tensor_file_write(argv[2], DLC_FILE_AUTO, out)) !=
                 DLC_OK) {
    rc = fail("write", st);
  } else {
    std::printf("%s on %s: ok\n", dlc_model_name(model),
                dlc_device_name(dlc_model_device(model)));
    rc = 0;
  }
  dlc_tensor_list_free(out);
  dlc_tensor_list_free(in);
  digits_destroy(model);
  return rc;
}
