//===- BufferViews.cpp - Buffers and their views --------------------------===//
#include "dlc/Conversion/BufferViews.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

SmallVector<Value> mlir::dlc::bufferAndViews(Value buffer) {
  SmallVector<Value> all{buffer};
  for (size_t i = 0; i < all.size(); ++i)
    for (Operation *user : all[i].getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == all[i])
        llvm::append_range(all, user->getResults());
  return all;
}

Value mlir::dlc::viewedBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

Value mlir::dlc::leadingSlice(OpBuilder &b, Location loc, Value buffer,
                              Value i) {
  auto ty = cast<MemRefType>(buffer.getType());
  int64_t rank = ty.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
  offsets[0] = i;
  for (int64_t d : ty.getShape().drop_front())
    sizes.push_back(b.getIndexAttr(d));
  MemRefType viewTy = memref::SubViewOp::inferRankReducedResultType(
      ty.getShape().drop_front(), ty, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, viewTy, buffer, offsets, sizes,
                                   strides);
}
