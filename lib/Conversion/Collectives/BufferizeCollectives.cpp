//===- BufferizeCollectives.cpp - dlc.all_reduce in one-shot-bufferize ----===//
//
// dlc.all_reduce on tensors reads and writes its operands' buffers: each
// result is its operand's buffer, reduced in place (the buffer form of the
// op). One-shot bufferization copies an operand first when it is read
// again after the reduction.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Bufferization.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::dlc;

namespace {

struct AllReduceOpInterface
    : public BufferizableOpInterface::ExternalModel<AllReduceOpInterface,
                                                    AllReduceOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()),
             BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto reduce = cast<AllReduceOp>(op);
    SmallVector<Value> buffers;
    for (Value in : reduce.getInputs()) {
      FailureOr<Value> buffer = getBuffer(rewriter, in, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    AllReduceOp::create(rewriter, op->getLoc(), buffers, reduce.getReduction());
    replaceOpWithBufferizedValues(rewriter, op, buffers);
    return success();
  }
};

} // namespace

void mlir::dlc::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, DlcDialect *) {
    AllReduceOp::attachInterface<AllReduceOpInterface>(*ctx);
  });
}
