//===- BufferViews.cpp - Buffers and their views --------------------------===//
#include "dlc/Conversion/BufferViews.h"

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
