//===- Spatial.cpp - Convolutions, pools, their padding and Resize -------===//
//
// Pad (absorbed by the Conv or pool that reads it), the window attributes,
// Conv, ConvTranspose, MaxPool, AveragePool and GlobalAveragePool, in 1-D
// and 2-D, and Resize.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

namespace dlc::onnx_import {

LogicalResult OnnxImporter::importPad(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  if (stringAttr(node, "mode", "constant") != "constant")
    return nodeError(node, "only mode 'constant' is supported");
  auto pads = constInput(node, 1, "pads");
  if (failed(pads))
    return failure();
  double value = 0;
  if (hasInput(node, 2)) {
    auto v = constInput(node, 2, "the constant value");
    if (failed(v))
      return failure();
    if ((*v)->numel() != 1 || (*v)->external)
      return nodeError(node, "the constant value must be a scalar");
    value = (*v)->isFloat ? (*v)->floats[0] : double((*v)->ints[0]);
  }
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> all((*pads)->ints.begin(), (*pads)->ints.end());
  if (hasInput(node, 3)) {
    // Opset 18: `pads` holds [begins, ends] of the listed axes only.
    auto axes = constInput(node, 3, "axes");
    if (failed(axes))
      return failure();
    int64_t n = (*axes)->ints.size();
    if (int64_t(all.size()) != 2 * n)
      return nodeError(node, "pads has " + Twine(all.size()) + " entries for " +
                                 Twine(n) + " axes");
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate((*axes)->ints)) {
      auto ax = normAxis(node, a, rank);
      if (failed(ax))
        return failure();
      full[*ax] = all[i];
      full[*ax + rank] = all[i + n];
    }
    all = std::move(full);
  }
  if (int64_t(all.size()) != 2 * rank)
    return nodeError(node, "pads has " + Twine(all.size()) +
                               " entries for a rank-" + Twine(rank) + " input");
  for (int64_t p : all) {
    if (p < 0)
      return nodeError(node, "negative pads (cropping) are not supported");
    if (p > ddlc::kMaxWindowAttr)
      return nodeError(node, "a padding of " + Twine(p) + " is larger than " +
                                 Twine(ddlc::kMaxWindowAttr));
  }
  // A zero Pad of the spatial dimensions that one Conv or AveragePool
  // reads is absorbed into the window's padding; any other is an op.
  const onnx::NodeProto *reader = nullptr;
  if (graph && readers.lookup(node.output(0)) == 1)
    for (const auto &n : graph->node())
      if (llvm::is_contained(n.input(), node.output(0)))
        reader = &n;
  bool spatialOnly =
      rank >= 3 && !all[0] && !all[1] && !all[rank] && !all[rank + 1];
  if (value == 0 && spatialOnly && reader &&
      reader->input(0) == node.output(0) &&
      (reader->op_type() == "Conv" || reader->op_type() == "AveragePool")) {
    Item item{*x, nullptr, all};
    items[node.output(0)] = item;
    return success();
  }
  // x placed into zeros at the begin pads (dlc.slice_grad, whose gradient
  // is the slice back); a non-zero value fills the border through a mask.
  auto t = typeOf(*x);
  SmallVector<int64_t> shape, offsets(all.begin(), all.begin() + rank),
      strides(rank, 1);
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d) {
    shape.push_back(t.getDimSize(d) + all[d] + all[d + rank]);
    if (shape.back() > 0 && n > kMaxElements / shape.back())
      return nodeError(node, "the padded tensor has more than 2^40 elements");
    n *= shape.back();
  }
  // A non-zero value fills the border through a constant mask of the
  // output's size, built here: bounded before it is allocated.
  constexpr int64_t kMaxPadMask = int64_t(1) << 24;
  if (value != 0 && n > kMaxPadMask) {
    auto d = nodeError(node, "padding with the value " + formatNumber(value) +
                                 " needs a constant mask of the output's " +
                                 Twine(n) + " elements, more than 2^24");
    d.attachNote() << "hint: pad with zeros, or pad a smaller tensor";
    return d;
  }
  auto type = RankedTensorType::get(shape, t.getElementType());
  Location loc = nodeLoc(node);
  Value r = ddlc::SliceGradOp::create(builder, loc, type, *x, offsets, strides);
  if (value != 0) {
    std::vector<double> inside(n, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i;
      bool in = true;
      for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t c = rem % shape[d];
        rem /= shape[d];
        in &= c >= all[d] && c < all[d] + t.getDimSize(d);
      }
      inside[i] = in;
    }
    auto m =
        maskTensor(node.output(0) + ".mask", shape, std::move(inside), loc);
    if (failed(m))
      return failure();
    r = ddlc::WhereOp::create(builder, loc, type, *m, r,
                              fill(loc, value, {}, t.getElementType()));
  }
  define(node, 0, r);
  return success();
}

FailureOr<Value> OnnxImporter::spatialInput(const onnx::NodeProto &node) {
  Item *item = lookup(node, 0);
  if (!item)
    return nodeError(node, "needs input 0"), failure();
  if (item->pendingPad)
    return item->value;
  return tensor(node, 0);
}

FailureOr<OnnxImporter::Window>
OnnxImporter::window(const onnx::NodeProto &node, RankedTensorType input,
                     ArrayRef<int64_t> kernel, bool oneD) {
  Window w;
  auto pair = [&](StringRef name, SmallVector<int64_t> &out) -> LogicalResult {
    out = intsAttr(node, name);
    if (oneD && out.size() == 1)
      out.insert(out.begin(), 1);
    if (out.empty())
      out = {1, 1};
    if (out.size() != 2 || out[0] < 1 || out[1] < 1 ||
        out[0] > ddlc::kMaxWindowAttr || out[1] > ddlc::kMaxWindowAttr)
      return nodeError(node, "'" + name +
                                 "' must be two positive numbers "
                                 "of at most " +
                                 Twine(ddlc::kMaxWindowAttr));
    return success();
  };
  if (failed(pair("strides", w.strides)) ||
      failed(pair("dilations", w.dilations)))
    return failure();
  int64_t h = input.getDimSize(2), wd = input.getDimSize(3);
  // Bounds that keep every window computation below within int64_t.
  for (int i = 0; i < 2; ++i)
    if (kernel[i] < 1 || kernel[i] > ddlc::kMaxWindowAttr)
      return nodeError(node, "the kernel must be two positive numbers of at "
                             "most " +
                                 Twine(ddlc::kMaxWindowAttr)),
             failure();
  if (h > kMaxSpatialDim || wd > kMaxSpatialDim)
    return nodeError(node, "a spatial dimension of the input is larger than " +
                               Twine(kMaxSpatialDim)),
           failure();
  std::string autoPad = stringAttr(node, "auto_pad", "NOTSET");
  SmallVector<int64_t> pads = intsAttr(node, "pads");
  if (oneD && pads.size() == 2)
    pads = {0, pads[0], 0, pads[1]};
  if (autoPad == "NOTSET") {
    if (pads.empty())
      pads = {0, 0, 0, 0};
    if (pads.size() != 4 || llvm::any_of(pads, [](int64_t p) {
          return p < 0 || p > ddlc::kMaxWindowAttr;
        }))
      return nodeError(node, "'pads' must be four non-negative numbers of "
                             "at most " +
                                 Twine(ddlc::kMaxWindowAttr)),
             failure();
  } else if (autoPad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Output size ceil(in / stride); the odd padding goes at the end for
    // SAME_UPPER, at the beginning for SAME_LOWER.
    pads.assign(4, 0);
    int64_t in[2] = {h, wd};
    for (int i = 0; i < 2; ++i) {
      int64_t out = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 -
                 in[i]);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else {
    return nodeError(node, "unknown auto_pad '" + autoPad + "'"), failure();
  }
  w.padding = pads; // ONNX's [h_begin, w_begin, h_end, w_end] is dlc's order.
  if (Item *item = lookup(node, 0); item && item->pendingPad) {
    SmallVector<int64_t> p = *item->pendingPad; // [begins..., ends...]
    if (oneD && p.size() == 6) // [N, C, L]: the [N, C, 1, L] view's pads.
      p = {p[0], p[1], 0, p[2], p[3], p[4], 0, p[5]};
    if (p.size() != 8)
      return nodeError(node, "a Pad before a 1-D Conv or pool is not "
                             "supported"),
             failure();
    if (p[0] || p[1] || p[4] || p[5])
      return nodeError(node, "the Pad before it pads the batch or channel "
                             "dimension"),
             failure();
    w.padding[0] += p[2];
    w.padding[1] += p[3];
    w.padding[2] += p[6];
    w.padding[3] += p[7];
    w.padded = p[2] || p[3] || p[6] || p[7];
    if (llvm::any_of(w.padding,
                     [](int64_t v) { return v > ddlc::kMaxWindowAttr; }))
      return nodeError(node, "the padding with the Pad before it is larger "
                             "than " +
                                 Twine(ddlc::kMaxWindowAttr)),
             failure();
  }
  for (int i = 0; i < 2; ++i) {
    int64_t in = i == 0 ? h : wd;
    int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
    if (in + w.padding[i] + w.padding[i + 2] < span)
      return nodeError(node, "the window (" + Twine(span) +
                                 ") is larger than the padded input (" +
                                 Twine(in + w.padding[i] + w.padding[i + 2]) +
                                 ")"),
             failure();
  }
  return w;
}

/// A 1-D convolution (rank-3 input and weight) as the 2-D one on an
/// [N, C, 1, L] view with an [O, C', 1, K] weight: replaces `x` and `w` by
/// the views and returns whether it did (rank 4 stays as it is).
FailureOr<bool> OnnxImporter::viewConv1DAs2D(const onnx::NodeProto &node,
                                             Value &x, Value &w) {
  auto tx = typeOf(x), tw = typeOf(w);
  if (tx.getRank() != 3 || tw.getRank() != 3)
    return false;
  auto x4 = reshape(node, x,
                    {tx.getDimSize(0), tx.getDimSize(1), 1, tx.getDimSize(2)});
  auto w4 = reshape(node, w,
                    {tw.getDimSize(0), tw.getDimSize(1), 1, tw.getDimSize(2)});
  if (failed(x4) || failed(w4))
    return failure();
  x = *x4;
  w = *w4;
  return true;
}

LogicalResult OnnxImporter::importConv(const onnx::NodeProto &node) {
  auto x = spatialInput(node);
  if (failed(x))
    return failure();
  auto w = tensor(node, 1);
  if (failed(w))
    return failure();
  // A 1-D convolution is a 2-D one; the result is viewed back as
  // [N, O, L'].
  auto view = viewConv1DAs2D(node, *x, *w);
  if (failed(view))
    return failure();
  bool oneD = *view;
  auto tx = typeOf(*x), tw = typeOf(*w);
  if (tx.getRank() != 4 || tw.getRank() != 4)
    return nodeError(node, "dlc supports 1-D and 2-D convolutions (rank-3 or "
                           "rank-4 input and weight), not rank " +
                               Twine(tx.getRank()));
  int64_t groups = intAttr(node, "group", 1);
  int64_t o = tw.getDimSize(0), c = tx.getDimSize(1);
  if (groups < 1 || c % groups || o % groups || tw.getDimSize(1) != c / groups)
    return nodeError(node,
                     "weight " + Twine(o) + "x" + Twine(tw.getDimSize(1)) +
                         "x... does not match " + Twine(c) +
                         " input channels in " + Twine(groups) + " groups");
  SmallVector<int64_t> kernel = {tw.getDimSize(2), tw.getDimSize(3)};
  SmallVector<int64_t> ks = intsAttr(node, "kernel_shape");
  if (oneD && ks.size() == 1)
    ks.insert(ks.begin(), 1);
  if (!ks.empty() && ArrayRef<int64_t>(ks) != ArrayRef<int64_t>(kernel))
    return nodeError(node, "kernel_shape does not match the weight");
  auto win = window(node, tx, kernel, oneD);
  if (failed(win))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    auto b = tensor(node, 2);
    if (failed(b))
      return failure();
    if (typeOf(*b).getRank() != 1 || typeOf(*b).getDimSize(0) != o)
      return nodeError(node, "the bias must have " + Twine(o) + " elements");
    bias = *b;
  }
  SmallVector<int64_t> shape = {tx.getDimSize(0), o};
  for (int i = 0; i < 2; ++i)
    shape.push_back(ddlc::windowOutputSize(
        tx.getDimSize(2 + i), kernel[i], win->strides[i], win->padding[i],
        win->padding[i + 2], win->dilations[i]));
  Value r = ddlc::Conv2DOp::create(
      builder, nodeLoc(node), RankedTensorType::get(shape, tx.getElementType()),
      *x, *w, bias, win->strides, win->padding, win->dilations, groups,
      ddlc::Activation::none);
  if (oneD) {
    auto r3 = reshape(node, r, {shape[0], shape[1], shape[3]});
    if (failed(r3))
      return failure();
    r = *r3;
  }
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importPool(const onnx::NodeProto &node) {
  bool isMax = node.op_type() == "MaxPool";
  auto x = spatialInput(node);
  if (failed(x))
    return failure();
  auto tx = typeOf(*x);
  // A 1-D pool is a 2-D one on an [N, C, 1, L] view.
  bool oneD = tx.getRank() == 3;
  if (oneD) {
    auto x4 = reshape(
        node, *x, {tx.getDimSize(0), tx.getDimSize(1), 1, tx.getDimSize(2)});
    if (failed(x4))
      return failure();
    x = x4;
    tx = typeOf(*x);
  }
  if (tx.getRank() != 4)
    return nodeError(node, "dlc supports 1-D and 2-D pooling (a rank-3 or "
                           "rank-4 input), not rank " +
                               Twine(tx.getRank()));
  bool ceil = intAttr(node, "ceil_mode", 0) != 0;
  if (ceil && !isMax && intAttr(node, "count_include_pad", 0))
    return nodeError(node, "ceil_mode = 1 with count_include_pad = 1 is not "
                           "supported")
           << "; export with ceil_mode=False or count_include_pad=False";
  if (isMax && intAttr(node, "storage_order", 0))
    return nodeError(node, "storage_order = 1 is not supported");
  if (isMax && failed(onlyFirstOutputUsed(node)))
    return failure();
  SmallVector<int64_t> kernel = intsAttr(node, "kernel_shape");
  if (oneD && kernel.size() == 1)
    kernel.insert(kernel.begin(), 1);
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1 ||
      kernel[0] > ddlc::kMaxWindowAttr || kernel[1] > ddlc::kMaxWindowAttr)
    return nodeError(node, "kernel_shape must be two positive numbers of at "
                           "most " +
                               Twine(ddlc::kMaxWindowAttr));
  auto win = window(node, tx, kernel, oneD);
  if (failed(win))
    return failure();
  if (ceil) {
    // The last, partial windows: extra end padding (-inf for a max, not
    // counted by an average that excludes padding), with PyTorch's rule
    // that a window starts inside the input or its begin padding.
    for (int i = 0; i < 2; ++i) {
      int64_t in = tx.getDimSize(2 + i);
      int64_t size = in + win->padding[i] + win->padding[i + 2];
      int64_t span = win->dilations[i] * (kernel[i] - 1) + 1;
      int64_t out = (size - span + win->strides[i] - 1) / win->strides[i] + 1;
      if ((out - 1) * win->strides[i] >= in + win->padding[i])
        --out;
      win->padding[i + 2] +=
          std::max<int64_t>(0, (out - 1) * win->strides[i] + span - size);
    }
  }
  if (isMax && win->padded)
    return nodeError(node, "reads a zero Pad; MaxPool pads with -inf, so the "
                           "Pad cannot be absorbed");
  SmallVector<int64_t> shape = {tx.getDimSize(0), tx.getDimSize(1)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(ddlc::windowOutputSize(
        tx.getDimSize(2 + i), kernel[i], win->strides[i], win->padding[i],
        win->padding[i + 2], win->dilations[i]));
  auto type = RankedTensorType::get(shape, tx.getElementType());
  Location loc = nodeLoc(node);
  Value r;
  if (isMax) {
    r = ddlc::MaxPool2DOp::create(builder, loc, type, *x, kernel, win->strides,
                                  win->padding, win->dilations);
  } else {
    if (win->dilations != SmallVector<int64_t>{1, 1})
      return nodeError(node, "AveragePool with dilations is not supported");
    bool countPad = intAttr(node, "count_include_pad", 0) != 0;
    if (win->padded && !countPad) {
      // Zeros from the Pad count; the pool's own padding must not exist.
      SmallVector<int64_t> own = intsAttr(node, "pads");
      if (llvm::any_of(own, [](int64_t p) { return p != 0; }) ||
          stringAttr(node, "auto_pad", "NOTSET") != "NOTSET")
        return nodeError(node, "a zero Pad before an AveragePool that pads "
                               "again without counting the padding is not "
                               "supported");
      countPad = true;
    }
    r = ddlc::AvgPool2DOp::create(builder, loc, type, *x, kernel, win->strides,
                                  win->padding, countPad);
  }
  if (oneD) {
    auto r3 = reshape(node, r, {shape[0], shape[1], shape[3]});
    if (failed(r3))
      return failure();
    r = *r3;
  }
  define(node, 0, r);
  return success();
}

LogicalResult
OnnxImporter::importGlobalAveragePool(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (t.getRank() < 3)
    return nodeError(node, "needs an [N, C, spatial...] input");
  SmallVector<int64_t> dims, shape = {t.getDimSize(0), t.getDimSize(1)};
  for (int64_t i = 2; i < t.getRank(); ++i) {
    dims.push_back(i);
    shape.push_back(1);
  }
  Value r = ddlc::MeanOp::create(
      builder, nodeLoc(node), RankedTensorType::get(shape, t.getElementType()),
      *x, dims, true);
  define(node, 0, r);
  return success();
}

/// ConvTranspose: the transposed convolution is the input gradient of the
/// convolution whose output it takes, `dlc.conv2d_grad_input` with ONNX's
/// weight `[C_in, C_out / group, k...]` as that convolution's weight; the
/// result's size is `stride (in - 1) + output_padding + dilation (k - 1) +
/// 1 - pads`, or `output_shape`. 1-D as 2-D on an `[N, C, 1, L]` view.
LogicalResult OnnxImporter::importConvTranspose(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto w = tensor(node, 1);
  if (failed(w))
    return failure();
  auto view = viewConv1DAs2D(node, *x, *w);
  if (failed(view))
    return failure();
  bool oneD = *view;
  auto tx = typeOf(*x), tw = typeOf(*w);
  if (tx.getRank() != 4 || tw.getRank() != 4)
    return nodeError(node, "dlc supports 1-D and 2-D transposed convolutions "
                           "(rank-3 or rank-4 input and weight), not rank " +
                               Twine(tx.getRank()));
  int64_t groups = intAttr(node, "group", 1);
  int64_t cin = tx.getDimSize(1);
  if (groups < 1 || tw.getDimSize(0) != cin || cin % groups)
    return nodeError(node, "weight " + Twine(tw.getDimSize(0)) + "x" +
                               Twine(tw.getDimSize(1)) +
                               "x... does not match " + Twine(cin) +
                               " input channels in " + Twine(groups) +
                               " groups");
  int64_t cout = tw.getDimSize(1) * groups;
  if (stringAttr(node, "auto_pad", "NOTSET") != "NOTSET") {
    auto d = nodeError(node, "auto_pad is not supported");
    d.attachNote() << "hint: give explicit pads (PyTorch's ConvTranspose "
                      "exports write them)";
    return d;
  }
  // A 1-D attribute gets the leading 1 of the [N, C, 1, L] view.
  auto attr2 = [&](StringRef name, int64_t def,
                   unsigned count) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> v = intsAttr(node, name);
    if (v.empty())
      return SmallVector<int64_t>(count, def);
    if (oneD && v.size() == count / 2) {
      if (count == 4)
        v = {0, v[0], 0, v[1]};
      else
        v.insert(v.begin(), def);
    }
    if (v.size() != count) {
      nodeError(node, name + " has " + Twine(v.size()) + " entries");
      return failure();
    }
    for (int64_t e : v)
      if (e < 0 || e > ddlc::kMaxWindowAttr) {
        nodeError(node, name + " holds " + Twine(e) + ", outside [0, " +
                            Twine(ddlc::kMaxWindowAttr) + "]");
        return failure();
      }
    return v;
  };
  auto strides = attr2("strides", 1, 2);
  auto pads = attr2("pads", 0, 4);
  auto dilations = attr2("dilations", 1, 2);
  auto outPad = attr2("output_padding", 0, 2);
  if (failed(strides) || failed(pads) || failed(dilations) || failed(outPad))
    return failure();
  SmallVector<int64_t> kernel = {tw.getDimSize(2), tw.getDimSize(3)};
  SmallVector<int64_t> shape = {tx.getDimSize(0), cout};
  SmallVector<int64_t> outShape = intsAttr(node, "output_shape");
  if (oneD && outShape.size() == 1)
    outShape.insert(outShape.begin(), 1);
  if (!outShape.empty() && outShape.size() != 2)
    return nodeError(node, "output_shape must have one entry per spatial "
                           "dimension");
  for (int i = 0; i < 2; ++i) {
    int64_t full = (*strides)[i] * (tx.getDimSize(2 + i) - 1) +
                   (*dilations)[i] * (kernel[i] - 1) + 1;
    if ((*strides)[i] < 1 || (*dilations)[i] < 1 ||
        (*outPad)[i] >= std::max((*strides)[i], (*dilations)[i]))
      return nodeError(node, "strides and dilations must be at least 1 and "
                             "output_padding smaller than the stride");
    // dlc.conv2d_grad_input is the gradient of a convolution, whose output
    // size fixes the input's only while output_padding < stride; PyTorch
    // also allows output_padding < dilation.
    if ((*outPad)[i] >= (*strides)[i]) {
      auto d = nodeError(node, "output_padding " + Twine((*outPad)[i]) +
                                   " is not smaller than the stride " +
                                   Twine((*strides)[i]));
      d.attachNote() << "hint: dlc computes a transposed convolution as a "
                        "convolution's gradient, which allows output_padding "
                        "below the stride only; use a larger stride or pad "
                        "the result instead";
      return d;
    }
    int64_t size;
    if (!outShape.empty()) {
      // ONNX: total padding = full + output_padding - output_shape, split
      // with the extra unit at the end (SAME_UPPER's rule).
      size = outShape[i];
      int64_t total = full + (*outPad)[i] - size;
      if (total < 0)
        return nodeError(node, "output_shape is larger than the transposed "
                               "convolution's full output");
      (*pads)[i] = total / 2;
      (*pads)[i + 2] = total - total / 2;
    } else {
      size = full + (*outPad)[i] - (*pads)[i] - (*pads)[i + 2];
    }
    if (size < 1)
      return nodeError(node, "the padding leaves no output");
    shape.push_back(size);
  }
  Location loc = nodeLoc(node);
  auto resTy = RankedTensorType::get(shape, tx.getElementType());
  Value r = ddlc::Conv2DGradInputOp::create(
      builder, loc, resTy, *x, *w, builder.getDenseI64ArrayAttr(*strides),
      builder.getDenseI64ArrayAttr(*pads),
      builder.getDenseI64ArrayAttr(*dilations),
      builder.getI64IntegerAttr(groups));
  if (failed(mlir::verify(r.getDefiningOp())))
    return nodeError(node, "the transposed convolution's shapes do not line "
                           "up");
  if (hasInput(node, 2)) {
    auto b = tensor(node, 2);
    if (failed(b))
      return failure();
    if (typeOf(*b).getRank() != 1 || typeOf(*b).getDimSize(0) != cout)
      return nodeError(node, "the bias must have " + Twine(cout) + " elements");
    auto col = reshape(node, *b, {cout, 1, 1});
    if (failed(col))
      return failure();
    auto biased = binary(node, "Add", r, *col);
    if (failed(biased))
      return failure();
    r = *biased;
  }
  if (oneD) {
    auto r3 = reshape(node, r, {shape[0], shape[1], shape[3]});
    if (failed(r3))
      return failure();
    r = *r3;
  }
  define(node, 0, r);
  return success();
}

namespace {

/// Resize's map from output to input positions along one axis: `in`
/// positions resized to `o` by the scale `s`, with the node's mode,
/// coordinate transformation and nearest rounding.
struct AxisResize {
  StringRef mode, ctm, nearestMode;
  double cubicA;
  bool excludeOutside;
  int64_t in, o;
  double s;

  /// The source coordinate of output position i (ONNX's formulas).
  double source(int64_t i) const {
    if (ctm == "align_corners")
      return o == 1 ? 0.0 : double(i) * double(in - 1) / double(o - 1);
    if (ctm == "asymmetric")
      return double(i) / s;
    if (ctm == "pytorch_half_pixel" && o == 1)
      return 0.0;
    if (ctm == "half_pixel_symmetric") {
      double adj = double(o) / (s * double(in));
      double center = double(in) / 2.0;
      double offset = center * (1.0 - adj);
      return offset + (double(i) + 0.5) / s - 0.5;
    }
    return (double(i) + 0.5) / s - 0.5;
  }

  /// The input index that nearest mode reads for output position i.
  int64_t nearest(int64_t i) const {
    double src = source(i);
    double f = std::floor(src);
    double r;
    if (nearestMode == "floor")
      r = f;
    else if (nearestMode == "ceil")
      r = std::ceil(src);
    else if (src - f == 0.5)
      r = nearestMode == "round_prefer_floor" ? f : f + 1;
    else
      r = std::round(src);
    return std::clamp<int64_t>(int64_t(r), 0, in - 1);
  }

  /// Whether the axis is a nearest upsampling by an integer factor that
  /// repeats every element (PyTorch's `nearest`).
  bool repeats() const {
    bool repeats = mode == "nearest" && o % in == 0;
    for (int64_t i = 0; repeats && i < o; ++i)
      repeats = nearest(i) == i / (o / in);
    return repeats;
  }

  /// The [in, o] interpolation weights, row-major: column i holds the
  /// weights of the input positions that output position i reads.
  std::vector<double> weights() const {
    std::vector<double> weights(size_t(in) * size_t(o), 0.0);
    for (int64_t i = 0; i < o; ++i) {
      if (mode == "nearest") {
        weights[size_t(nearest(i)) * o + i] = 1.0;
        continue;
      }
      if (mode == "cubic") {
        addCubicTaps(weights, i);
        continue;
      }
      double src = std::clamp(source(i), 0.0, double(in - 1));
      int64_t i0 = int64_t(std::floor(src));
      int64_t i1 = std::min(i0 + 1, in - 1);
      double l = src - double(i0);
      weights[size_t(i0) * o + i] += 1.0 - l;
      weights[size_t(i1) * o + i] += l;
    }
    return weights;
  }

  /// Adds the weights of cubic output position i to column i.
  void addCubicTaps(std::vector<double> &weights, int64_t i) const {
    // Four taps around the source coordinate (not clamped: PyTorch's
    // and ONNX's cubic read the edge for taps outside), each index
    // clamped to the input; with exclude_outside, outside taps weigh 0
    // and the others are renormalised.
    double src = source(i);
    double f = std::floor(src), tt = src - f;
    auto keys = [&](double d) {
      d = std::fabs(d);
      return d <= 1 ? ((cubicA + 2) * d - (cubicA + 3)) * d * d + 1
             : d < 2
                 ? ((cubicA * d - 5 * cubicA) * d + 8 * cubicA) * d - 4 * cubicA
                 : 0.0;
    };
    double w[4], sum = 0;
    int64_t idx[4];
    for (int k = 0; k < 4; ++k) {
      int64_t j = int64_t(f) - 1 + k;
      w[k] = keys(tt + 1 - k);
      if (excludeOutside && (j < 0 || j >= in))
        w[k] = 0;
      idx[k] = std::clamp<int64_t>(j, 0, in - 1);
      sum += w[k];
    }
    for (int k = 0; k < 4; ++k)
      weights[size_t(idx[k]) * o + i] +=
          excludeOutside && sum != 0 ? w[k] / sum : w[k];
  }
};

} // namespace

/// Resize, modes `nearest`, `linear` (bilinear and trilinear are linear
/// along each axis in turn) and `cubic` (bicubic likewise), every
/// coordinate transformation but `tf_crop_and_resize`. Along each resized
/// axis the output is a fixed linear map of the input, applied as a matmul
/// with an `[in, out]` constant of interpolation weights (one, two or four
/// non-zeros per column);
/// a nearest upsampling by an integer factor that repeats every element
/// (PyTorch's `nearest`) is a broadcast instead.
LogicalResult OnnxImporter::importResize(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  std::string mode = stringAttr(node, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    auto d = nodeError(node, "mode '" + mode +
                                 "' is not supported; dlc supports nearest, "
                                 "linear and cubic");
    d.attachNote() << "hint: export F.interpolate with mode='nearest', "
                      "'linear', 'bilinear', 'trilinear' or 'bicubic'";
    return d;
  }
  // Cubic convolution (Keys): A = -0.75 as PyTorch's bicubic exports it.
  double cubicA = floatAttr(node, "cubic_coeff_a", -0.75f);
  bool excludeOutside = intAttr(node, "exclude_outside", 0) != 0;
  std::string ctm =
      stringAttr(node, "coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" &&
      ctm != "align_corners" && ctm != "asymmetric" &&
      ctm != "half_pixel_symmetric")
    return nodeError(node, "coordinate_transformation_mode '" + ctm +
                               "' is not supported");
  std::string nearestMode =
      stringAttr(node, "nearest_mode", "round_prefer_floor");
  if (nearestMode != "round_prefer_floor" &&
      nearestMode != "round_prefer_ceil" && nearestMode != "floor" &&
      nearestMode != "ceil")
    return nodeError(node, "nearest_mode '" + nearestMode + "' is unknown");
  if (stringAttr(node, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return nodeError(node, "only keep_aspect_ratio_policy 'stretch' is "
                           "supported");
  // The axes the scales or sizes describe (opset 18), all by default.
  SmallVector<int64_t> axes;
  for (int64_t a : intsAttr(node, "axes")) {
    auto ax = normAxis(node, a, rank);
    if (failed(ax))
      return failure();
    axes.push_back(*ax);
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);

  SmallVector<int64_t> out(t.getShape());
  SmallVector<double> scale(rank, 1.0);
  if (failed(resizeTargets(node, t, axes, out, scale)))
    return failure();
  if (intAttr(node, "antialias", 0) && mode != "nearest")
    for (int64_t a = 0; a < rank; ++a)
      if (out[a] < t.getDimSize(a))
        return nodeError(node, "antialiased downsampling is not supported");

  Value y = *x;
  for (int64_t a = 0; a < rank; ++a) {
    int64_t in = t.getDimSize(a), o = out[a];
    double s = scale[a];
    if (o == in && s == 1.0)
      continue;
    if (in == 0)
      return nodeError(node, "cannot resize an empty dimension");
    AxisResize axis{mode, ctm, nearestMode, cubicA, excludeOutside, in, o, s};
    FailureOr<Value> resized;
    if (axis.repeats()) {
      resized = repeatAlong(node, y, a, o / in);
    } else {
      // Checked before the matrix is allocated (in * o could also wrap).
      if (in > (int64_t(1) << 26) / o)
        return nodeError(node, "resizing " + Twine(in) + " to " + Twine(o) +
                                   " positions is too large for dlc's "
                                   "interpolation matrix");
      resized = interpolateAlong(node, y, a, o, axis.weights());
    }
    if (failed(resized))
      return failure();
    y = *resized;
  }
  define(node, 0, y);
  return success();
}

LogicalResult OnnxImporter::resizeTargets(const onnx::NodeProto &node,
                                          RankedTensorType t,
                                          ArrayRef<int64_t> axes,
                                          SmallVectorImpl<int64_t> &out,
                                          SmallVectorImpl<double> &scale) {
  if (hasInput(node, 3)) {
    auto sizes = constInput(node, 3, "sizes");
    if (failed(sizes))
      return failure();
    if ((*sizes)->ints.size() != axes.size())
      return nodeError(node, "sizes has " + Twine((*sizes)->ints.size()) +
                                 " entries for " + Twine(axes.size()) +
                                 " axes");
    for (auto [i, a] : llvm::enumerate(axes)) {
      int64_t sz = (*sizes)->ints[i];
      if (sz < 1 || sz > (int64_t(1) << 31))
        return nodeError(node, "a size of " + Twine(sz) + " is not supported");
      out[a] = sz;
      scale[a] = double(sz) / double(t.getDimSize(a));
    }
    return success();
  }
  Item *item = hasInput(node, 2) ? lookup(node, 2) : nullptr;
  if (!item || !item->constant || !item->constant->isFloat ||
      item->constant->external) {
    auto d = nodeError(node, "needs constant scales or sizes");
    d.attachNote() << "hint: dlc compiles static shapes; fix the input's "
                      "shape (--input-shape) and export with a constant "
                      "scale_factor or size";
    return d;
  }
  const std::vector<double> &sc = item->constant->floats;
  if (sc.size() != axes.size())
    return nodeError(node, "scales has " + Twine(sc.size()) + " entries for " +
                               Twine(axes.size()) + " axes");
  for (auto [i, a] : llvm::enumerate(axes)) {
    double s = sc[i];
    double o = std::floor(double(t.getDimSize(a)) * s);
    if (!(s > 0) || !(o >= 1) || o > double(int64_t(1) << 31))
      return nodeError(node, "a scale of " + Twine(std::to_string(s)) +
                                 " is not supported");
    scale[a] = s;
    out[a] = int64_t(o);
  }
  return success();
}

FailureOr<Value> OnnxImporter::repeatAlong(const onnx::NodeProto &node, Value y,
                                           int64_t a, int64_t factor) {
  Location loc = nodeLoc(node);
  auto ty = typeOf(y);
  SmallVector<int64_t> shape(ty.getShape());
  // [..., in, ...] -> [..., in, k, ...] -> [..., in * k, ...].
  SmallVector<int64_t> split(shape);
  split.insert(split.begin() + a + 1, 1);
  auto s1 = reshape(node, y, split);
  if (failed(s1))
    return failure();
  split[a + 1] = factor;
  Value b = ddlc::BroadcastToOp::create(
      builder, loc, RankedTensorType::get(split, ty.getElementType()), *s1);
  shape[a] *= factor;
  return reshape(node, b, shape);
}

FailureOr<Value> OnnxImporter::interpolateAlong(const onnx::NodeProto &node,
                                                Value y, int64_t a, int64_t o,
                                                std::vector<double> weights) {
  Location loc = nodeLoc(node);
  auto ty = typeOf(y);
  int64_t rank = ty.getRank(), in = ty.getDimSize(a);
  SmallVector<int64_t> shape(ty.getShape());
  // Move the axis last, multiply by the weights, move it back.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != a)
      perm.push_back(d);
  perm.push_back(a);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  SmallVector<int64_t> moved;
  for (int64_t p : perm)
    moved.push_back(shape[p]);
  Value v = y;
  if (a != rank - 1)
    v = ddlc::TransposeOp::create(
        builder, loc, RankedTensorType::get(moved, ty.getElementType()), y,
        perm);
  int64_t rows = numElements(moved) / in;
  auto flat = reshape(node, v, {rows, in});
  if (failed(flat))
    return failure();
  auto m = maskTensor(node.output(0) + ".weights" + std::to_string(a), {in, o},
                      std::move(weights), loc);
  if (failed(m))
    return failure();
  Value mat = *m;
  if (ty.getElementType() != typeOf(mat).getElementType())
    mat = ddlc::CastOp::create(
        builder, loc, RankedTensorType::get({in, o}, ty.getElementType()), mat);
  Value p = ddlc::MatmulOp::create(
      builder, loc, RankedTensorType::get({rows, o}, ty.getElementType()),
      *flat, mat);
  moved.back() = o;
  auto back = reshape(node, p, moved);
  if (failed(back))
    return failure();
  v = *back;
  shape[a] = o;
  if (a != rank - 1)
    v = ddlc::TransposeOp::create(
        builder, loc, RankedTensorType::get(shape, ty.getElementType()), v,
        inverse);
  return v;
}

} // namespace dlc::onnx_import
