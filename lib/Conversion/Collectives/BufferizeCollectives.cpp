//===- BufferizeCollectives.cpp - the collectives in one-shot-bufferize ---===//
//
// dlc.all_reduce on tensors reads and writes its operands' buffers: each
// result is its operand's buffer, reduced in place (the buffer form of the
// op). One-shot bufferization copies an operand first when it is read
// again after the reduction. dlc.reduce_scatter, dlc.all_gather and
// dlc.shard write into their inits' buffers, like linalg ops into their
// outs.
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

/// The buffer form of a sharding collective, on `inputs` and `inits`.
Operation *createOnBuffers(RewriterBase &b, ReduceScatterOp op,
                           ValueRange inputs, ValueRange inits) {
  return ReduceScatterOp::create(b, op.getLoc(), inputs, inits, op.getRanks(),
                                 op.getReduction());
}
Operation *createOnBuffers(RewriterBase &b, AllGatherOp op, ValueRange inputs,
                           ValueRange inits) {
  return AllGatherOp::create(b, op.getLoc(), inputs, inits, op.getRanks());
}
Operation *createOnBuffers(RewriterBase &b, ShardOp op, ValueRange inputs,
                           ValueRange inits) {
  return ShardOp::create(b, op.getLoc(), inputs, inits, op.getRanks());
}

/// dlc.reduce_scatter, dlc.all_gather and dlc.shard read their inputs and
/// write every element of their inits, whose buffers their results are.
template <typename OpTy>
struct ShardingOpInterface
    : public BufferizableOpInterface::ExternalModel<ShardingOpInterface<OpTy>,
                                                    OpTy> {
  static bool isInit(Operation *op, OpOperand &operand) {
    return operand.getOperandNumber() >= cast<OpTy>(op).getInputs().size();
  }
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !isInit(op, operand);
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return isInit(op, operand);
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    if (!isInit(op, operand))
      return {};
    unsigned i = operand.getOperandNumber() - cast<OpTy>(op).getInputs().size();
    return {{op->getResult(i), BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto typed = cast<OpTy>(op);
    SmallVector<Value> inputs, inits;
    for (auto [values, buffers] :
         {std::pair(ValueRange(typed.getInputs()), &inputs),
          std::pair(ValueRange(typed.getInits()), &inits)})
      for (Value v : values) {
        FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
        if (failed(buffer))
          return failure();
        buffers->push_back(*buffer);
      }
    rewriter.setInsertionPoint(op);
    createOnBuffers(rewriter, typed, inputs, inits);
    replaceOpWithBufferizedValues(rewriter, op, inits);
    return success();
  }
};

} // namespace

void mlir::dlc::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, DlcDialect *) {
    AllReduceOp::attachInterface<AllReduceOpInterface>(*ctx);
    ReduceScatterOp::attachInterface<ShardingOpInterface<ReduceScatterOp>>(
        *ctx);
    AllGatherOp::attachInterface<ShardingOpInterface<AllGatherOp>>(*ctx);
    ShardOp::attachInterface<ShardingOpInterface<ShardOp>>(*ctx);
  });
}
