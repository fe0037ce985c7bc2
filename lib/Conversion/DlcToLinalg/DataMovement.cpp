//===- DataMovement.cpp - concat, slice, gather, masks and gradients ------===//
//
// Ops that move elements without arithmetic. dlc.reshape becomes views
// (`reshapeTo`), dlc.transpose a linalg.transpose, and a dlc.transfer of
// an entry's argument or result nothing (the runtime stages them). Each of
// the others becomes one linalg.generic over its result whose body reads its
// inputs with tensor.extract at computed indices (every indexing map stays an
// identity, and every buffer an identity layout, which the CPU tiling and
// the CUDA kernels expect):
//
//   dlc.concat       result[.., j, ..] = input_k[.., j - start_k, ..] for the
//                    input k whose range holds j (each read clamped into its
//                    input, the right one selected);
//   dlc.slice        result[j] = input[offsets + j * strides];
//   dlc.slice_grad   result[j] = grad[(j - offsets) / strides] where j lies
//                    on the window, else 0 (placeWindow, which pads the
//                    images of Convolution.cpp too);
//   dlc.where        condition != 0 ? lhs : rhs, each operand broadcast
//                    into the result by its indexing map;
//   dlc.compare,     masks: arith.cmpf/cmpi and andi/ori/xori, the operands
//   dlc.logical      broadcast the same way;
//   dlc.int_arith    integer addi/subi/muli, broadcast likewise;
//   dlc.cumsum       a reduction over the axis of the elements in range;
//   dlc.gather       result[p, d] = table[row(indices[p]), d];
//   dlc.gather_grad  a reduction over the positions p: out[v, d] adds
//                    grad[p, d] where row(indices[p]) = v;
//   dlc.gather_elements       result[i] = input[i, axis := row(indices[i])];
//   dlc.gather_elements_grad  a reduction along the axis, as gather_grad.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

using IndexBodyFn =
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> index)>;

/// A linalg.generic producing `ty` whose element at `index` is `body(index)`.
Value generateFromIndex(OpBuilder &b, Location loc, RankedTensorType ty,
                        IndexBodyFn body) {
  int64_t rank = ty.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, TypeRange{ty}, ValueRange{},
             ValueRange{emptyTensor(b, loc, ty)}, SmallVector<AffineMap>{id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange) {
               SmallVector<Value> index;
               for (int64_t d = 0; d < rank; ++d)
                 index.push_back(linalg::IndexOp::create(nb, l, d));
               linalg::YieldOp::create(nb, l, body(nb, l, index));
             })
      .getResult(0);
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// On the CPU: each input copied once into its window of the result (a
/// linalg.copy into the window, which bufferizes in place: nothing but the
/// copies remains), instead of every element selecting among all the
/// inputs.
Value copyIntoSlices(PatternRewriter &rewriter, ConcatOp op) {
  Location loc = op.getLoc();
  auto outTy = tensorTy(op.getResult());
  int64_t rank = outTy.getRank(), dim = op.getDim();
  // Not a tensor.empty: canonicalization would turn each window of it
  // into a fresh tensor.empty, and the windows into copies.
  Value dest =
      bufferization::AllocTensorOp::create(rewriter, loc, outTy, ValueRange{});
  int64_t at = 0;
  for (Value in : op.getInputs()) {
    auto inTy = tensorTy(in);
    if (inTy.getDimSize(dim) == 0)
      continue;
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
        strides(rank, rewriter.getIndexAttr(1));
    offsets[dim] = rewriter.getIndexAttr(at);
    for (int64_t d : inTy.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    Value window = tensor::ExtractSliceOp::create(rewriter, loc, inTy, dest,
                                                  offsets, sizes, strides);
    Value copied =
        linalg::CopyOp::create(rewriter, loc, in, window).getResult(0);
    dest = tensor::InsertSliceOp::create(rewriter, loc, copied, dest, offsets,
                                         sizes, strides);
    at += inTy.getDimSize(dim);
  }
  return dest;
}

struct LowerConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  // Groups of a long concat are concats, lowered by this pattern again.
  void initialize() { setHasBoundedRewriteRecursion(); }
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t dim = op.getDim();
    SmallVector<Value> inputs(op.getInputs());
    if (inputs.size() == 1) {
      rewriter.replaceOp(op, inputs[0]);
      return success();
    }
    if (deviceOf(op.getResult()) == Device::cpu) {
      // Bufferization analyses a chain of insertions into one tensor in
      // time that grows faster than its length: many inputs are joined in
      // groups first (a concat of concats, each lowered in turn).
      constexpr size_t kGroup = 32;
      if (inputs.size() > kGroup) {
        SmallVector<Value> groups;
        for (size_t i = 0; i < inputs.size(); i += kGroup) {
          ArrayRef<Value> part = ArrayRef<Value>(inputs).slice(
              i, std::min(kGroup, inputs.size() - i));
          if (part.size() == 1) {
            groups.push_back(part[0]);
            continue;
          }
          SmallVector<int64_t> shape(tensorTy(part[0]).getShape());
          shape[dim] = 0;
          for (Value v : part)
            shape[dim] += tensorTy(v).getDimSize(dim);
          auto group = ConcatOp::create(
              rewriter, op.getLoc(),
              RankedTensorType::get(shape, tensorTy(part[0]).getElementType()),
              part, dim);
          group->setDiscardableAttrs(op->getDiscardableAttrDictionary());
          groups.push_back(group);
        }
        auto joined =
            ConcatOp::create(rewriter, op.getLoc(), op.getType(), groups, dim);
        joined->setDiscardableAttrs(op->getDiscardableAttrDictionary());
        rewriter.replaceOp(op, joined);
        return success();
      }
      rewriter.replaceOp(op, copyIntoSlices(rewriter, op));
      return success();
    }
    // Elsewhere (a GPU kernel): every element selects its input, from the
    // last one back.
    Value r = generateFromIndex(
        rewriter, op.getLoc(), tensorTy(op.getResult()),
        [&](OpBuilder &b, Location l, ArrayRef<Value> index) {
          Value j = index[dim];
          // From the last input back: select(j < end_k, v_k, later).
          SmallVector<int64_t> starts;
          int64_t at = 0;
          for (Value in : inputs) {
            starts.push_back(at);
            at += tensorTy(in).getDimSize(dim);
          }
          Value result;
          for (int64_t k = inputs.size() - 1; k >= 0; --k) {
            int64_t size = tensorTy(inputs[k]).getDimSize(dim);
            if (size == 0)
              continue;
            SmallVector<Value> pos(index);
            Value local =
                arith::SubIOp::create(b, l, j, indexConst(b, l, starts[k]));
            local = arith::MaxSIOp::create(b, l, local, indexConst(b, l, 0));
            local =
                arith::MinSIOp::create(b, l, local, indexConst(b, l, size - 1));
            pos[dim] = local;
            Value v = tensor::ExtractOp::create(b, l, inputs[k], pos);
            if (!result) {
              result = v;
              continue;
            }
            Value before =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j,
                                      indexConst(b, l, starts[k] + size));
            result = arith::SelectOp::create(b, l, before, v, result);
          }
          return result;
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> offsets = op.getOffsets(), strides = op.getStrides();
    // Reads at computed indices, not through a strided view: the input
    // stays an identity-layout buffer, which a CUDA kernel can take.
    Value r = generateFromIndex(
        rewriter, op.getLoc(), tensorTy(op.getResult()),
        [&](OpBuilder &b, Location l, ArrayRef<Value> index) -> Value {
          SmallVector<Value> at;
          for (auto [d, j] : llvm::enumerate(index)) {
            Value i = j;
            if (strides[d] != 1)
              i = arith::MulIOp::create(b, l, i, indexConst(b, l, strides[d]));
            if (offsets[d] != 0)
              i = arith::AddIOp::create(b, l, i, indexConst(b, l, offsets[d]));
            at.push_back(i);
          }
          return tensor::ExtractOp::create(b, l, op.getInput(), at);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerSliceGrad : OpRewritePattern<SliceGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceGradOp op,
                                PatternRewriter &rewriter) const override {
    auto gradTy = tensorTy(op.getGrad());
    SmallVector<int64_t> first(gradTy.getRank(), 0);
    rewriter.replaceOp(op, placeWindow(rewriter, op.getLoc(), op.getGrad(),
                                       tensorTy(op.getResult()),
                                       op.getOffsets(), op.getStrides(), first,
                                       gradTy.getShape(), 0.0));
    return success();
  }
};

struct LowerWhere : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WhereOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outTy = tensorTy(op.getResult());
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<Value> ins{op.getCondition(), op.getLhs(), op.getRhs()};
    SmallVector<AffineMap> maps;
    for (Value v : ins)
      maps.push_back(
          broadcastMap(ctx, tensorTy(v).getShape(), outTy.getShape()));
    maps.push_back(rewriter.getMultiDimIdentityMap(outTy.getRank()));
    Value r =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{outTy}, ins,
            ValueRange{emptyTensor(rewriter, loc, outTy)}, maps,
            SmallVector<utils::IteratorType>(outTy.getRank(),
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value c = args[0], set;
              if (isa<FloatType>(c.getType()))
                set = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, c,
                                            floatConst(b, l, c.getType(), 0.0));
              else
                set = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::ne, c,
                    arith::ConstantOp::create(
                        b, l, b.getIntegerAttr(c.getType(), 0)));
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, set, args[1], args[2])
                      .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// The table row that index `i` (any integer type) reads: negative ones
/// count from the end, and the result is clamped into [0, rows).
Value tableRow(OpBuilder &b, Location l, Value i, int64_t rows) {
  Value r = arith::IndexCastOp::create(b, l, b.getIndexType(), i);
  Value zero = indexConst(b, l, 0);
  Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
  r = arith::SelectOp::create(
      b, l, neg, arith::AddIOp::create(b, l, r, indexConst(b, l, rows)), r);
  r = arith::MaxSIOp::create(b, l, r, zero);
  return arith::MinSIOp::create(b, l, r, indexConst(b, l, rows - 1));
}

struct LowerGather : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    int64_t p = tensorTy(op.getIndices()).getRank();
    int64_t rows = tensorTy(op.getTable()).getDimSize(0);
    Value r = generateFromIndex(
        rewriter, op.getLoc(), tensorTy(op.getResult()),
        [&](OpBuilder &b, Location l, ArrayRef<Value> index) -> Value {
          Value i = tensor::ExtractOp::create(b, l, op.getIndices(),
                                              index.take_front(p));
          SmallVector<Value> at{tableRow(b, l, i, rows)};
          at.append(index.begin() + p, index.end());
          return tensor::ExtractOp::create(b, l, op.getTable(), at);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// A reduction over the gathered positions: out[v, d...] = sum over p of
/// (row(indices[p]) == v ? grad[p, d...] : 0).
/// On the CPU: a scatter-add, one position after the other (O(positions x
/// row size)): each row of the table gradient gets the gradient rows of its
/// positions added in position order, the order of the generic form below,
/// so the two give the same bits.
Value scatterAddRows(PatternRewriter &rewriter, GatherGradOp op) {
  Location loc = op.getLoc();
  auto outTy = tensorTy(op.getResult());
  auto idxTy = tensorTy(op.getIndices());
  int64_t rows = outTy.getDimSize(0);
  int64_t width = outTy.getNumElements() / std::max<int64_t>(rows, 1);
  int64_t positions = idxTy.getNumElements();
  Type et = outTy.getElementType();
  Type acc = accumulatorType(rewriter, et);
  // Indices [P...] -> [positions]; gradient [P..., W...] -> [positions, W].
  auto group = [](int64_t from, int64_t to) {
    ReassociationIndices g;
    for (int64_t i = from; i < to; ++i)
      g.push_back(i);
    return g;
  };
  int64_t p = idxTy.getRank();
  Value idx = op.getIndices();
  if (p != 1)
    idx = tensor::CollapseShapeOp::create(
        rewriter, loc, idx, ArrayRef<ReassociationIndices>{group(0, p)});
  Value grad = tensor::CollapseShapeOp::create(
      rewriter, loc, op.getGrad(),
      ArrayRef<ReassociationIndices>{
          group(0, p), group(p, tensorTy(op.getGrad()).getRank())});
  auto tableTy = RankedTensorType::get({rows, width}, acc);
  Value init = filledTensor(rewriter, loc, tableTy, 0.0);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value end = arith::ConstantIndexOp::create(rewriter, loc, positions);
  auto rowTy = RankedTensorType::get({1, width}, acc);
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, end, one, ValueRange{init},
      [&](OpBuilder &b, Location l, Value p, ValueRange iter) {
        Value row =
            tableRow(b, l, tensor::ExtractOp::create(b, l, idx, p), rows);
        SmallVector<OpFoldResult> sizes{b.getIndexAttr(1),
                                        b.getIndexAttr(width)};
        SmallVector<OpFoldResult> strides{b.getIndexAttr(1), b.getIndexAttr(1)};
        Value g = tensor::ExtractSliceOp::create(
            b, l, RankedTensorType::get({1, width}, et), grad,
            ArrayRef<OpFoldResult>{p, b.getIndexAttr(0)}, sizes, strides);
        Value cur = tensor::ExtractSliceOp::create(
            b, l, rowTy, iter[0],
            ArrayRef<OpFoldResult>{row, b.getIndexAttr(0)}, sizes, strides);
        auto id = b.getMultiDimIdentityMap(2);
        Value sum =
            linalg::GenericOp::create(
                b, l, TypeRange{rowTy}, ValueRange{g}, ValueRange{cur},
                ArrayRef<AffineMap>{id, id},
                SmallVector<utils::IteratorType>(2,
                                                 utils::IteratorType::parallel),
                [&](OpBuilder &bb, Location ll, ValueRange args) {
                  Value add = arith::AddFOp::create(
                      bb, ll, args[1], convertFloat(bb, ll, args[0], acc));
                  linalg::YieldOp::create(bb, ll, add);
                })
                .getResult(0);
        Value next = tensor::InsertSliceOp::create(
            b, l, sum, iter[0], ArrayRef<OpFoldResult>{row, b.getIndexAttr(0)},
            sizes, strides);
        scf::YieldOp::create(b, l, next);
      });
  Value table = loop.getResult(0);
  if (outTy.getRank() != 2) {
    ReassociationIndices tail;
    for (int64_t i = 1; i < outTy.getRank(); ++i)
      tail.push_back(i);
    table = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(outTy.getShape(), acc), table,
        ArrayRef<ReassociationIndices>{{0}, tail});
  }
  return convertTensor(rewriter, loc, table, et);
}

struct LowerGatherGrad : OpRewritePattern<GatherGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherGradOp op,
                                PatternRewriter &rewriter) const override {
    // The CPU scatters; a GPU kernel computes every table element as a
    // reduction over the positions (no atomics: deterministic).
    std::optional<Device> device = deviceOf(op.getResult());
    if (device == Device::cpu && tensorTy(op.getResult()).getRank() >= 2 &&
        tensorTy(op.getIndices()).getRank() >= 1) {
      rewriter.replaceOp(op, scatterAddRows(rewriter, op));
      return success();
    }
    Location loc = op.getLoc();
    auto outTy = tensorTy(op.getResult());
    auto idxTy = tensorTy(op.getIndices());
    int64_t rank = outTy.getRank(), p = idxTy.getRank();
    int64_t rows = outTy.getDimSize(0);
    // Loops: v, d... (parallel), then p... (reduction).
    MLIRContext *ctx = rewriter.getContext();
    int64_t loops = rank + p;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> gradExprs, idxExprs, outExprs;
    for (int64_t i = 0; i < p; ++i) {
      gradExprs.push_back(dim(rank + i));
      idxExprs.push_back(dim(rank + i));
    }
    for (int64_t i = 1; i < rank; ++i)
      gradExprs.push_back(dim(i));
    for (int64_t i = 0; i < rank; ++i)
      outExprs.push_back(dim(i));
    SmallVector<AffineMap> maps{AffineMap::get(loops, 0, gradExprs, ctx),
                                AffineMap::get(loops, 0, idxExprs, ctx),
                                AffineMap::get(loops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.append(p, utils::IteratorType::reduction);
    Type et = outTy.getElementType();
    Type acc = accumulatorType(rewriter, et);
    auto accTy = RankedTensorType::get(outTy.getShape(), acc);
    Value init = filledTensor(rewriter, loc, accTy, 0.0);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{accTy},
            ValueRange{op.getGrad(), op.getIndices()}, ValueRange{init}, maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value row = tableRow(b, l, args[1], rows);
              Value v = linalg::IndexOp::create(b, l, 0);
              Value hit =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, row, v);
              Value g = convertFloat(b, l, args[0], acc);
              Value add = arith::AddFOp::create(b, l, args[2], g);
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, hit, add, args[2]).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, sum, et));
    return success();
  }
};

struct LowerIntArith : OpRewritePattern<IntArithOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IntArithOp op,
                                PatternRewriter &rewriter) const override {
    IntArithKind k = op.getKind();
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), tensorTy(op.getResult()),
                        ValueRange{op.getLhs(), op.getRhs()},
                        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                          if (k == IntArithKind::add)
                            return arith::AddIOp::create(b, l, a[0], a[1]);
                          if (k == IntArithKind::sub)
                            return arith::SubIOp::create(b, l, a[0], a[1]);
                          return arith::MulIOp::create(b, l, a[0], a[1]);
                        }));
    return success();
  }
};

/// out[.., i, ..] = sum over j along the axis of (j in range of i ?
/// input[.., j, ..] : 0): a reduction over the axis (quadratic in its
/// length, as short as a sequence of token positions; exact, integers).
struct LowerCumSum : OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumSumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto ty = tensorTy(op.getResult());
    int64_t rank = ty.getRank(), axis = op.getAxis();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> readExprs, outExprs;
    for (int64_t i = 0; i < rank; ++i) {
      readExprs.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
      outExprs.push_back(getAffineDimExpr(i, ctx));
    }
    SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, readExprs, ctx),
                                AffineMap::get(rank + 1, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    using P = arith::CmpIPredicate;
    P pred = op.getReverse() ? (op.getExclusive() ? P::sgt : P::sge)
                             : (op.getExclusive() ? P::slt : P::sle);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{ty}, ValueRange{op.getInput()},
            ValueRange{filledTensor(rewriter, loc, ty, 0.0)}, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value j = linalg::IndexOp::create(b, l, rank);
              Value i = linalg::IndexOp::create(b, l, axis);
              Value in = arith::CmpIOp::create(b, l, pred, j, i);
              Value add = arith::AddIOp::create(b, l, args[1], args[0]);
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, in, add, args[1]).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, sum);
    return success();
  }
};

struct LowerGatherElements : OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    int64_t axis = op.getAxis();
    int64_t dim = tensorTy(op.getInput()).getDimSize(axis);
    Value r = generateFromIndex(
        rewriter, op.getLoc(), tensorTy(op.getResult()),
        [&](OpBuilder &b, Location l, ArrayRef<Value> index) -> Value {
          Value i = tensor::ExtractOp::create(b, l, op.getIndices(), index);
          SmallVector<Value> at(index);
          at[axis] = tableRow(b, l, i, dim);
          return tensor::ExtractOp::create(b, l, op.getInput(), at);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// out[d...] = sum over r of (row(indices[d, axis := r]) == d[axis] ?
/// grad[d, axis := r] : 0): a reduction along the gathered axis, r in
/// order (a GPU kernel per element, no atomics: deterministic).
struct LowerGatherElementsGrad : OpRewritePattern<GatherElementsGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outTy = tensorTy(op.getResult());
    int64_t rank = outTy.getRank(), axis = op.getAxis();
    int64_t dim = outTy.getDimSize(axis);
    MLIRContext *ctx = rewriter.getContext();
    // Loops: d... (parallel), then r (reduction).
    SmallVector<AffineExpr> readExprs, outExprs;
    for (int64_t i = 0; i < rank; ++i) {
      readExprs.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
      outExprs.push_back(getAffineDimExpr(i, ctx));
    }
    AffineMap read = AffineMap::get(rank + 1, 0, readExprs, ctx);
    SmallVector<AffineMap> maps{read, read,
                                AffineMap::get(rank + 1, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Type et = outTy.getElementType();
    Type acc = accumulatorType(rewriter, et);
    auto accTy = RankedTensorType::get(outTy.getShape(), acc);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{accTy},
            ValueRange{op.getGrad(), op.getIndices()},
            ValueRange{filledTensor(rewriter, loc, accTy, 0.0)}, maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value row = tableRow(b, l, args[1], dim);
              Value here = linalg::IndexOp::create(b, l, axis);
              Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                                row, here);
              Value g = convertFloat(b, l, args[0], acc);
              Value add = arith::AddFOp::create(b, l, args[2], g);
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, hit, add, args[2]).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, sum, et));
    return success();
  }
};

struct LowerReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(
        op, reshapeTo(b, op.getLoc(), op.getInput(), tensorTy(op.getResult())));
    return success();
  }
};

struct LowerTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &b) const override {
    auto resTy = tensorTy(op.getResult());
    Value init = emptyTensor(b, op.getLoc(), resTy);
    Value y = linalg::TransposeOp::create(b, op.getLoc(), op.getInput(), init,
                                          op.getPermutation())
                  .getResult()[0];
    b.replaceOp(op, y);
    return success();
  }
};

/// A host-boundary transfer has no code of its own: the runtime stages the
/// entry's inputs and outputs (docs/gpu.md). Anything else would need a
/// copy between devices inside the entry, which no placement produces.
struct LowerTransfer : OpRewritePattern<TransferOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransferOp op,
                                PatternRewriter &b) const override {
    Value input = op.getInput();
    bool fromArgument =
        isa<BlockArgument>(input) &&
        isa<func::FuncOp>(input.getParentBlock()->getParentOp());
    bool toReturn = llvm::all_of(op->getUsers(), [](Operation *user) {
      return isa<func::ReturnOp>(user);
    });
    if (!fromArgument && !toReturn)
      return op.emitOpError("moves a value inside the entry; only transfers "
                            "of entry arguments and results can be lowered");
    b.replaceOp(op, input);
    return success();
  }
};

} // namespace

Value mlir::dlc::lowering::placeWindow(OpBuilder &b, Location loc, Value x,
                                       RankedTensorType ty,
                                       ArrayRef<int64_t> offset,
                                       ArrayRef<int64_t> stride,
                                       ArrayRef<int64_t> first,
                                       ArrayRef<int64_t> count, double value) {
  auto xTy = tensorTy(x);
  return generateFromIndex(
      b, loc, ty, [&](OpBuilder &nb, Location l, ArrayRef<Value> index) {
        Value inside;
        SmallVector<Value> at;
        for (auto [d, j] : llvm::enumerate(index)) {
          // A dimension x fills whole, in place: read at j, unguarded.
          if (offset[d] == 0 && stride[d] == 1 && first[d] == 0 &&
              count[d] == ty.getDimSize(d) && count[d] == xTy.getDimSize(d)) {
            at.push_back(j);
            continue;
          }
          // i = j - offset must be a multiple of the stride, and
          // 0 <= q = i / stride < count (for a negative stride, i <= 0).
          Value i =
              arith::SubIOp::create(nb, l, j, indexConst(nb, l, offset[d]));
          Value q =
              arith::DivSIOp::create(nb, l, i, indexConst(nb, l, stride[d]));
          Value ok = arith::AndIOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                    stride[d] > 0 ? i : q,
                                    indexConst(nb, l, 0)),
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, q,
                                    indexConst(nb, l, count[d])));
          if (stride[d] != 1)
            ok = arith::AndIOp::create(
                nb, l, ok,
                arith::CmpIOp::create(
                    nb, l, arith::CmpIPredicate::eq,
                    arith::RemSIOp::create(nb, l, i,
                                           indexConst(nb, l, stride[d])),
                    indexConst(nb, l, 0)));
          inside = inside ? arith::AndIOp::create(nb, l, inside, ok).getResult()
                          : ok;
          at.push_back(arith::AddIOp::create(
              nb, l,
              arith::SelectOp::create(nb, l, ok, q, indexConst(nb, l, 0)),
              indexConst(nb, l, first[d])));
        }
        Value v = tensor::ExtractOp::create(nb, l, x, at);
        if (!inside)
          return v;
        return arith::SelectOp::create(
                   nb, l, inside, v,
                   floatConst(nb, l, ty.getElementType(), value))
            .getResult();
      });
}

/// An elementwise comparison: ordered for floats but `ne` (true for NaN),
/// signed for integers, unsigned for booleans.
struct LowerCompare : OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    ComparePredicate p = op.getPredicate();
    rewriter.replaceOp(
        op,
        elementwise(rewriter, op.getLoc(), tensorTy(op.getResult()),
                    ValueRange{op.getLhs(), op.getRhs()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      if (isa<FloatType>(a[0].getType())) {
                        using F = arith::CmpFPredicate;
                        F f = p == ComparePredicate::eq   ? F::OEQ
                              : p == ComparePredicate::ne ? F::UNE
                              : p == ComparePredicate::lt ? F::OLT
                              : p == ComparePredicate::le ? F::OLE
                              : p == ComparePredicate::gt ? F::OGT
                                                          : F::OGE;
                        return arith::CmpFOp::create(b, l, f, a[0], a[1]);
                      }
                      using I = arith::CmpIPredicate;
                      bool u = a[0].getType().isInteger(1);
                      I i = p == ComparePredicate::eq   ? I::eq
                            : p == ComparePredicate::ne ? I::ne
                            : p == ComparePredicate::lt ? (u ? I::ult : I::slt)
                            : p == ComparePredicate::le ? (u ? I::ule : I::sle)
                            : p == ComparePredicate::gt ? (u ? I::ugt : I::sgt)
                                                        : (u ? I::uge : I::sge);
                      return arith::CmpIOp::create(b, l, i, a[0], a[1]);
                    }));
    return success();
  }
};

struct LowerLogical : OpRewritePattern<LogicalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogicalOp op,
                                PatternRewriter &rewriter) const override {
    LogicalKind k = op.getKind();
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), tensorTy(op.getResult()),
                        ValueRange{op.getLhs(), op.getRhs()},
                        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                          if (k == LogicalKind::and_)
                            return arith::AndIOp::create(b, l, a[0], a[1]);
                          if (k == LogicalKind::or_)
                            return arith::OrIOp::create(b, l, a[0], a[1]);
                          return arith::XOrIOp::create(b, l, a[0], a[1]);
                        }));
    return success();
  }
};

void mlir::dlc::lowering::populateDataMovementLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerConcat, LowerSlice, LowerSliceGrad, LowerWhere,
               LowerCompare, LowerLogical, LowerGather, LowerGatherGrad,
               LowerGatherElements, LowerGatherElementsGrad, LowerIntArith,
               LowerCumSum, LowerReshape, LowerTranspose, LowerTransfer>(
      patterns.getContext());
}
