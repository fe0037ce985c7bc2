//===- MLIRGenRecurrent.cpp - Recurrent layers ----------------------------===//
//
// The model format's `lstm` and `gru`, PyTorch's nn.LSTM and nn.GRU: their
// parameters (named and initialised as PyTorch names and initialises them,
// so that a state_dict loads as it is), one input projection and one
// dlc.lstm or dlc.gru per layer and direction, the directions joined along
// the features.
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include <cmath>

using namespace dlc;
using namespace ::dlc::mlirgen;
using namespace mlir;
using llvm::Twine;
using mlir::dlc::ParameterInit;

namespace {

/// Most layers a recurrent call may stack.
constexpr int64_t kMaxRecurrentLayers = 64;

} // namespace

Value MLIRGenImpl::emitRecurrent(Call &c) {
  const bool lstm = c.name() == "lstm";
  const int64_t numGates = lstm ? 4 : 3;
  const std::string op = ("'" + c.name() + "'").str();
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> hidden = intArg(c, 1, 0);
  std::optional<std::string> name = layerNameArg(c, 2);
  std::optional<int64_t> layers = intArg(c, 3, 1);
  std::optional<bool> bidirectional = boolArg(c, 4, false);
  std::optional<bool> batchFirst = boolArg(c, 5, false);
  std::optional<bool> last = boolArg(c, 6, false);
  std::optional<bool> hasBias = boolArg(c, 7, true);
  if (!hidden || !name || !layers || !bidirectional || !batchFirst || !last ||
      !hasBias)
    return {};
  RankedTensorType xType = tensorType(x);
  if (xType.getRank() != 3)
    return error(c.argLoc(0),
                 op + " expects a [T, B, features] sequence, got " +
                     typeStr(xType),
                 "with batch_first=true the input is [B, T, features]");
  if (*hidden < 1 || *hidden > kMaxElements / 4)
    return error(c.argLoc(1),
                 op + " needs a positive hidden size, got " + Twine(*hidden),
                 usage(c.spec));
  if (*layers < 1 || *layers > kMaxRecurrentLayers)
    return error(c.argLoc(3),
                 op + " needs between 1 and " + Twine(kMaxRecurrentLayers) +
                     " layers, got " + Twine(*layers),
                 usage(c.spec));
  if (failed(claimLayer(*name, c.argLoc(2))))
    return {};

  Location l = loc(c.loc());
  Type et = xType.getElementType();
  int64_t h = *hidden, dirs = *bidirectional ? 2 : 1;
  Value seq = x;
  if (*batchFirst)
    seq = mlir::dlc::TransposeOp::create(
        builder, l,
        RankedTensorType::get(
            {xType.getDimSize(1), xType.getDimSize(0), xType.getDimSize(2)},
            et),
        x, ArrayRef<int64_t>{1, 0, 2});
  auto seqTy = tensorType(seq);
  int64_t steps = seqTy.getDimSize(0), batch = seqTy.getDimSize(1);
  int64_t gh = numGates * h;
  RankedTensorType gatesTy = makeType(c.loc(), {steps, batch, gh}, et);
  RankedTensorType flatTy = makeType(c.loc(), {steps * batch, gh}, et);
  RankedTensorType outTy = makeType(c.loc(), {steps, batch, dirs * h}, et);
  if (!gatesTy || !flatTy || !outTy)
    return {};
  auto stateTy = RankedTensorType::get({batch, h}, et);
  auto ysTy = RankedTensorType::get({steps, batch, h}, et);
  Value zeros = mlir::dlc::FillOp::create(builder, l, stateTy,
                                          builder.getF64FloatAttr(0.0));
  // PyTorch's reset_parameters: every weight and bias U(-1/sqrt(H),
  // 1/sqrt(H)).
  double bound = 1.0 / std::sqrt(double(h));
  SmallVector<Value> finals;
  for (int64_t layer = 0; layer < *layers; ++layer) {
    int64_t in = tensorType(seq).getDimSize(2);
    Value flat = mlir::dlc::ReshapeOp::create(
        builder, l, RankedTensorType::get({steps * batch, in}, et), seq);
    SmallVector<Value> ys;
    finals.clear();
    for (int64_t d = 0; d < dirs; ++d) {
      std::string suffix =
          "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      auto param = [&](StringRef what, ArrayRef<int64_t> shape) {
        return declareParameter(c, *name + "." + what.str() + suffix,
                                RankedTensorType::get(shape, et),
                                ParameterInit::uniform, bound);
      };
      Value wih = param("weight_ih", {gh, in});
      Value whh = param("weight_hh", {gh, h});
      Value bih, bhh;
      if (*hasBias) {
        bih = param("bias_ih", {gh});
        bhh = param("bias_hh", {gh});
      }
      auto biasTy = RankedTensorType::get({gh}, et);
      // An LSTM adds both biases to the gates: one bias for the
      // projection. A GRU's recurrent bias is inside the reset gate's
      // product.
      if (lstm && bih)
        bih = mlir::dlc::AddOp::create(builder, l, biasTy, bih, bhh);
      Value proj =
          mlir::dlc::LinearOp::create(builder, l, flatTy, flat, wih, bih);
      proj = mlir::dlc::ReshapeOp::create(builder, l, gatesTy, proj);
      Value y;
      if (lstm) {
        y = mlir::dlc::LstmOp::create(builder, l,
                                      TypeRange{ysTy, ysTy, gatesTy}, proj, whh,
                                      zeros, zeros, /*reverse=*/d == 1)
                .getY();
      } else {
        if (!bhh)
          bhh = mlir::dlc::FillOp::create(builder, l, biasTy,
                                          builder.getF64FloatAttr(0.0));
        y = mlir::dlc::GruOp::create(builder, l, TypeRange{ysTy, gatesTy}, proj,
                                     whh, bhh, zeros,
                                     /*reverse=*/d == 1)
                .getY();
      }
      ys.push_back(y);
      // The final hidden state: the last step computed.
      Value final = mlir::dlc::SliceOp::create(
          builder, l, RankedTensorType::get({1, batch, h}, et), y,
          ArrayRef<int64_t>{d == 1 ? 0 : steps - 1, 0, 0},
          ArrayRef<int64_t>{1, 1, 1});
      finals.push_back(
          mlir::dlc::ReshapeOp::create(builder, l, stateTy, final));
    }
    seq = dirs == 1
              ? ys[0]
              : mlir::dlc::ConcatOp::create(
                    builder, l,
                    RankedTensorType::get({steps, batch, dirs * h}, et), ys, 2)
                    .getResult();
  }
  if (*last)
    return dirs == 1
               ? finals[0]
               : mlir::dlc::ConcatOp::create(
                     builder, l, RankedTensorType::get({batch, dirs * h}, et),
                     finals, 1)
                     .getResult();
  if (*batchFirst)
    seq = mlir::dlc::TransposeOp::create(
        builder, l, RankedTensorType::get({batch, steps, dirs * h}, et), seq,
        ArrayRef<int64_t>{1, 0, 2});
  return seq;
}
