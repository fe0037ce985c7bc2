/*===- dlc/dlc_io.h - Tensor files for the dlc runtime ---------------------===*
 *
 * Reading and writing tensors as .npy and .safetensors files, for programs
 * that feed compiled models (and for the `dlc run` tool). Tensors live in a
 * `dlc_tensor_list`: an ordered set of named, owned, dense row-major tensors.
 *
 * .npy: format versions 1.0, 2.0 and 3.0; little-endian, C order; dtypes
 * <f4 <f2 <f8 <i8 <i4 |i1 |u1 (f32 f16 f64 i64 i32 i8 u8). bf16 has no .npy
 * dtype and cannot be written as .npy.
 *
 * .safetensors: dtypes F32 F16 BF16 F64 I64 I32 I8 U8; validated strictly;
 * written with the tensors sorted by name and {"format":"pt"} metadata.
 *
 * Writers are atomic: they write "<path>.tmp.<pid>", fsync it and rename it
 * over `path`.
 *
 * Error handling follows dlc/dlc_runtime.h (status + dlc_last_error()).
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_DLC_IO_H
#define DLC_DLC_IO_H

#include "dlc/dlc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  /* Reading: .npy when the file starts with the .npy magic, else
   * .safetensors. Writing: by the path's extension (".npy" or
   * ".safetensors"); any other extension is DLC_ERR_INVALID_ARGUMENT. */
  DLC_FILE_AUTO = 0,
  DLC_FILE_NPY = 1,
  DLC_FILE_SAFETENSORS = 2
} dlc_file_format;

typedef struct dlc_tensor_list dlc_tensor_list;

/* Creates an empty list. */
DLC_API dlc_status dlc_tensor_list_create(dlc_tensor_list **out);

/* Frees the list and all its tensors. NULL is ignored. */
DLC_API void dlc_tensor_list_free(dlc_tensor_list *list);

/* The number of tensors; -1 for NULL. */
DLC_API int32_t dlc_tensor_list_size(const dlc_tensor_list *list);

/* Describes tensor `i` (in insertion / file order). `data` is owned by the
 * list, 64-byte aligned, and may be written. */
DLC_API dlc_status dlc_tensor_list_get(const dlc_tensor_list *list, int32_t i,
                                       dlc_tensor_info *info);

/* Like dlc_tensor_list_get, without the data: describes tensor `i` and sets
 * `info->data` to NULL when the tensor is still in its file (see
 * dlc_tensor_file_read). Check a file's shapes with it before reading them. */
DLC_API dlc_status dlc_tensor_list_describe(const dlc_tensor_list *list,
                                            int32_t i, dlc_tensor_info *info);

/* Copies tensor `i`'s bytes (`nbytes`, which must be its size) to `dst`;
 * a tensor still in its file is read from it into `dst` directly, without a
 * copy in the list. */
DLC_API dlc_status dlc_tensor_list_copy(const dlc_tensor_list *list, int32_t i,
                                        void *dst, size_t nbytes);

/* The index of the tensor called `name`; -1 (and an error message) when there
 * is none. */
DLC_API int32_t dlc_tensor_list_find(const dlc_tensor_list *list,
                                     const char *name);

/* Appends a tensor called `name` (non-empty, unique in the list) of the given
 * dtype and shape (`rank` in [0, 8], dims >= 0; `shape` may be NULL when rank
 * is 0). `data` (numel * dtype size bytes) is copied; when it is NULL the
 * tensor is zero-filled, ready to be written through its info's `data` (e.g.
 * as an output buffer of dlc_model_run). When `index` is not NULL it receives
 * the new tensor's index. */
DLC_API dlc_status dlc_tensor_list_add(dlc_tensor_list *list, const char *name,
                                       dlc_dtype dtype, int32_t rank,
                                       const int64_t *shape, const void *data,
                                       int32_t *index);

/* Reads a tensor file into a new list (`*out`, NULL on failure).
 *  - .npy: one tensor, named after the file: its base name without a
 *    trailing ".npy" ("x" for "data/x.npy").
 *  - .safetensors: every tensor, in the order of their data in the file; the
 *    metadata is ignored.
 * Only the header is read and checked here. A tensor's data is read when it
 * is first used (dlc_tensor_list_get, dlc_tensor_list_copy, writing the
 * list), from the file as it is then: the file stays open while the list
 * lives, and a file truncated since is DLC_ERR_IO at that use. */
DLC_API dlc_status dlc_tensor_file_read(const char *path,
                                        dlc_file_format format,
                                        dlc_tensor_list **out);

/* Writes a list as a tensor file.
 *  - .npy: the list must hold exactly one tensor (its name is not stored).
 *  - .safetensors: every tensor, sorted by name. */
DLC_API dlc_status dlc_tensor_file_write(const char *path,
                                         dlc_file_format format,
                                         const dlc_tensor_list *list);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_DLC_IO_H */
