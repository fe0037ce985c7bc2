//===- MLIRGenShapes.cpp - Shape ops and reductions -----------------------===//
//
// The calls of the model format that rearrange or reduce a tensor:
// reshape (with one inferred -1), flatten, transpose, permute, and the
// reductions sum and mean, with their dims checked against the input's
// rank.
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

using namespace dlc;
using namespace ::dlc::mlirgen;
using namespace mlir;
using llvm::StringRef;
using llvm::Twine;

//===----------------------------------------------------------------------===//
// Shapes and reductions
//===----------------------------------------------------------------------===//

Value MLIRGenImpl::emitReshape(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<llvm::SmallVector<IntElement>> dims = intListArg(c, 1);
  if (!dims)
    return {};

  RankedTensorType xType = tensorType(x);
  int64_t total = xType.getNumElements();
  llvm::SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  int64_t known = 1;
  bool tooLarge = false;
  for (auto [i, dim] : llvm::enumerate(*dims)) {
    shape.push_back(dim.value);
    if (dim.value == -1) {
      if (inferred)
        return error(dim.loc, "only one dimension of 'reshape' can be -1",
                     "-1 stands for the one dimension that is inferred");
      inferred = i;
      continue;
    }
    if (dim.value < 1)
      return error(dim.loc,
                   "'reshape' dimensions must be positive or -1, got " +
                       Twine(dim.value),
                   usage(c.spec));
    if (llvm::MulOverflow(known, dim.value, known) || known > kMaxElements)
      tooLarge = true;
  }

  std::string from = typeStr(xType) + " (" + std::to_string(total) +
                     " element" + (total == 1 ? "" : "s") + ")";
  std::string into = shapeStr(shape);
  if (!tooLarge && inferred) {
    if (total % known != 0)
      return error(c.loc(), "cannot reshape " + from + " into " + into,
                   Twine(total) + " is not a multiple of " + Twine(known));
    shape[*inferred] = total / known;
  } else if (tooLarge || known != total) {
    return error(c.loc(),
                 "cannot reshape " + from + " into " + into +
                     (tooLarge ? std::string(" (too many elements)")
                               : " (" + std::to_string(known) + " elements)"),
                 "the new shape must have as many elements; one dimension "
                 "may be -1 to infer it");
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::ReshapeOp::create(builder, loc(c.loc()), resultType, x)
      .getResult();
}

Value MLIRGenImpl::emitFlatten(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> start = intArg(c, 1, 1);
  if (!start)
    return {};
  std::optional<int64_t> end = intArg(c, 2, -1);
  if (!end)
    return {};

  RankedTensorType xType = tensorType(x);
  llvm::ArrayRef<int64_t> in = xType.getShape();
  llvm::SmallVector<int64_t> shape;
  if (in.empty()) {
    // Like torch.flatten, a 0-d tensor becomes [1]; dims 0 and -1 exist.
    const std::pair<unsigned, int64_t> dims[] = {{1, *start}, {2, *end}};
    for (auto [i, dim] : dims)
      if (dim != 0 && dim != -1)
        return error(c.argLoc(i),
                     "'flatten' " + c.paramName(i) + "=" + Twine(dim) +
                         " is out of range for " + typeStr(xType),
                     "a 0-d tensor has dims -1 and 0");
    shape.push_back(1);
  } else {
    std::optional<int64_t> s =
        normalizeDim(c, c.argLoc(1), "start_dim=", *start, x);
    if (!s)
      return {};
    std::optional<int64_t> e =
        normalizeDim(c, c.argLoc(2), "end_dim=", *end, x);
    if (!e)
      return {};
    if (*s > *e)
      return error(c.loc(),
                   "'flatten' start_dim " + Twine(*start) +
                       " comes after end_dim " + Twine(*end) + " for " +
                       typeStr(xType),
                   "start_dim must not come after end_dim");
    int64_t merged = 1;
    for (int64_t i = 0; i < xType.getRank(); ++i) {
      if (i < *s || i > *e)
        shape.push_back(in[i]);
      else
        merged *= in[i];
      if (i == *e)
        shape.push_back(merged);
    }
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::ReshapeOp::create(builder, loc(c.loc()), resultType, x)
      .getResult();
}

Value MLIRGenImpl::emitTranspose(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> dim0 = intArg(c, 1, 0);
  if (!dim0)
    return {};
  std::optional<int64_t> dim1 = intArg(c, 2, 0);
  if (!dim1)
    return {};
  std::optional<int64_t> d0 = normalizeDim(c, c.argLoc(1), "dim0=", *dim0, x);
  if (!d0)
    return {};
  std::optional<int64_t> d1 = normalizeDim(c, c.argLoc(2), "dim1=", *dim1, x);
  if (!d1)
    return {};

  RankedTensorType xType = tensorType(x);
  llvm::SmallVector<int64_t> perm =
      llvm::to_vector(llvm::seq<int64_t>(0, xType.getRank()));
  std::swap(perm[*d0], perm[*d1]);
  llvm::SmallVector<int64_t> shape(xType.getShape());
  std::swap(shape[*d0], shape[*d1]);
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::TransposeOp::create(builder, loc(c.loc()), resultType, x,
                                        perm)
      .getResult();
}

Value MLIRGenImpl::emitPermute(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<llvm::SmallVector<IntElement>> dims = intListArg(c, 1);
  if (!dims)
    return {};
  RankedTensorType xType = tensorType(x);
  int64_t rank = xType.getRank();
  if (static_cast<int64_t>(dims->size()) != rank)
    return error(c.argLoc(1),
                 "'permute' needs " + Twine(rank) + " dims for " +
                     typeStr(xType) + ", got " + Twine(dims->size()),
                 "list every dimension once, e.g. permute(x, [2, 0, 1]) for "
                 "a rank-3 tensor");

  llvm::SmallVector<int64_t> perm, shape;
  for (const IntElement &dim : *dims) {
    std::optional<int64_t> d = normalizeDim(c, dim.loc, "dim ", dim.value, x);
    if (!d)
      return {};
    if (llvm::is_contained(perm, *d))
      return error(dim.loc,
                   "dim " + Twine(dim.value) + " appears twice in 'permute'",
                   "list every dimension once");
    perm.push_back(*d);
    shape.push_back(xType.getDimSize(*d));
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::TransposeOp::create(builder, loc(c.loc()), resultType, x,
                                        perm)
      .getResult();
}

Value MLIRGenImpl::emitReduce(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  RankedTensorType xType = tensorType(x);
  llvm::SmallVector<int64_t> dims;
  if (c.arg(1)) {
    std::optional<llvm::SmallVector<IntElement>> list = intListArg(c, 1);
    if (!list)
      return {};
    if (list->empty())
      return error(c.argLoc(1), "'" + c.name() + "' needs at least one dim",
                   "omit dims to reduce over all dimensions");
    for (const IntElement &dim : *list) {
      std::optional<int64_t> d = normalizeDim(c, dim.loc, "dim ", dim.value, x);
      if (!d)
        return {};
      if (llvm::is_contained(dims, *d))
        return error(dim.loc,
                     "dim " + Twine(dim.value) + " appears twice in '" +
                         c.name() + "'",
                     "list every dimension once");
      dims.push_back(*d);
    }
    llvm::sort(dims);
  } else {
    dims = llvm::to_vector(llvm::seq<int64_t>(0, xType.getRank()));
  }
  std::optional<bool> keepdim = boolArg(c, 2, false);
  if (!keepdim)
    return {};

  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < xType.getRank(); ++d) {
    if (!llvm::is_contained(dims, d))
      shape.push_back(xType.getDimSize(d));
    else if (*keepdim)
      shape.push_back(1);
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  if (c.name() == "sum")
    return mlir::dlc::SumOp::create(builder, loc(c.loc()), resultType, x, dims,
                                    *keepdim)
        .getResult();
  return mlir::dlc::MeanOp::create(builder, loc(c.loc()), resultType, x, dims,
                                   *keepdim)
      .getResult();
}
