#!/usr/bin/env python3
"""Export a corpus of small real-architecture models from PyTorch to ONNX,
with reference outputs, to test dlc's ONNX importer on what users export.

Run with a Python that has PyTorch 2.x, torchvision, onnx, onnxscript and
onnxruntime (not Debian's torch 1.13, which gen_onnx_reference.py uses):

    python3 test/e2e/onnx/gen_real_models.py                   # everything
    python3 test/e2e/onnx/gen_real_models.py --only gpt vit    # some archs
    python3 test/e2e/onnx/gen_real_models.py --out /tmp/real   # elsewhere
    python3 test/e2e/onnx/gen_real_models.py --variants dynamo # one way

Every architecture (ResNet, MobileNetV2, SqueezeNet, ShuffleNetV2, VGG, a
transformer encoder, GPT and ViT blocks, small MLP/embedding/1-D conv
classifiers, LSTM, GRU) is built at reduced width from a fixed seed (the
whole corpus stays under about 4 MB), with random BatchNorm/LayerNorm affine
parameters (`transformer` keeps the default LayerNorm init) and BatchNorm
running statistics from a few train-mode passes, put in eval() mode and
exported three ways, each into its own folder `<out>/<arch>_<variant>/`:

  dynamo       torch.onnx.export(dynamo=True, external_data=True), the
               default exporter at its default opset; input names given
  dynamo18     the same with opset_version=18
  torchscript  torch.onnx.export(dynamo=False, opset_version=17,
               do_constant_folding=True) with the exporter's own input and
               output names (e.g. `input.1`, numeric outputs); weights inline

Each folder holds:

  model.onnx        the export (dynamo: with model.onnx.data, the weights the
                    exporter writes as external data: every initializer of
                    256 bytes or more; when none is that large, all of them)
  <input>.npy       one per graph input, named after it (characters other
                    than [A-Za-z0-9_.] become `_`): float32 standard normal,
                    or int64 token ids
  y.npy             the output (one .npy per output, named like the inputs,
                    if a model has several): PyTorch's forward pass in
                    float64 (a float64 copy of the float32 model, inputs cast
                    to float64), stored as float32
  meta.json         arch, variant, opset and IR version read back from the
                    file, the input and output files by ONNX name, the op
                    types (main graph, subgraphs, local functions), where the
                    weights live, the versions used, and `ort_scaled_err`:
                    max|onnxruntime - reference| / max|reference|

An export that fails is recorded in `<out>/failures.json` (folder -> error)
and its folder removed; the other exports go on. failures.json is rewritten
on every run (entries of folders not rerun are kept). The dynamo exports
keep the exporter's per-node metadata_props, whose stack traces name this
script's path, so the files differ from machine to machine.
"""

import argparse
import contextlib
import copy
import io
import json
import os
import re
import shutil
import sys
import tempfile
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import onnxscript  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torchvision.models.mobilenetv2 import MobileNetV2  # noqa: E402
from torchvision.models.resnet import BasicBlock  # noqa: E402
from torchvision.models.shufflenetv2 import ShuffleNetV2  # noqa: E402
from torchvision.models.squeezenet import Fire  # noqa: E402
from torchvision.ops.misc import Conv2dNormActivation  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "real")
VARIANTS = ("dynamo", "dynamo18", "torchscript")
SEED = 0

ARCHS = {}  # name -> builder() returning a Spec


class Spec:
    """A model in eval mode, its example inputs and the dynamo input names."""

    def __init__(self, model, inputs, input_names):
        self.model = model
        self.inputs = tuple(inputs)
        self.input_names = list(input_names)


def arch(name):
    def register(builder):
        ARCHS[name] = builder
        return builder
    return register


def randn(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def randint(high, *shape, seed=1):
    return torch.randint(0, high, shape,
                         generator=torch.Generator().manual_seed(seed))


def finish(model, warmup_shape=None, default_norms=False):
    """Return the model in eval mode, its normalisation layers made
    non-trivial: BatchNorm and LayerNorm affine parameters drawn at random
    (unless default_norms: then the LayerNorms keep weight 1, bias 0, which
    the exporters deduplicate into one shared initializer), and BatchNorm
    running statistics from three train-mode passes on shifted, scaled
    inputs of warmup_shape."""
    bns = [m for m in model.modules()
           if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    lns = [] if default_norms else [m for m in model.modules()
                                    if isinstance(m, nn.LayerNorm)]
    with torch.no_grad():
        for norm in bns + lns:
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.normal_(0.0, 0.2)
        if bns:
            model.train()
            for step in range(3):
                model(randn(*warmup_shape, seed=100 + step) * 1.5 + 0.5)
    return model.eval()


# ---------------------------------------------------------------- CNNs ----

class SmallResNet(nn.Module):
    """ResNet-18's structure (torchvision BasicBlocks, one per stage) at
    reduced width: conv7x7/2 + BN + ReLU + maxpool, four stages, the first
    block of stages 2-4 strided with a 1x1 conv + BN downsample, global
    average pool, fc."""

    def __init__(self, widths=(8, 16, 24, 32), num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        stages, inplanes = [], widths[0]
        for i, planes in enumerate(widths):
            stride = 1 if i == 0 else 2
            downsample = None
            if stride != 1 or inplanes != planes:
                downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(planes))
            stages.append(nn.Sequential(
                BasicBlock(inplanes, planes, stride, downsample)))
            inplanes = planes
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


@arch("resnet")
def build_resnet():
    return Spec(finish(SmallResNet(), (4, 3, 32, 32)),
                [randn(2, 3, 32, 32)], ["x"])


@arch("mobilenet")
def build_mobilenet():
    # torchvision's MobileNetV2 at width 0.25 with fewer inverted residual
    # blocks; its last 1x1 conv is cut from 1280 to 64 channels (1280 is
    # fixed for width_mult <= 1 and would hold most of the weights).
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 2, 2],
               [6, 96, 1, 1], [6, 160, 1, 2]]
    model = MobileNetV2(num_classes=10, width_mult=0.25,
                        inverted_residual_setting=setting)
    last_in = model.features[-1][0].in_channels
    model.features[-1] = Conv2dNormActivation(
        last_in, 64, kernel_size=1, norm_layer=nn.BatchNorm2d,
        activation_layer=nn.ReLU6)
    nn.init.kaiming_normal_(model.features[-1][0].weight, mode="fan_out")
    model.last_channel = 64
    model.classifier[1] = nn.Linear(64, 10)
    return Spec(finish(model, (4, 3, 32, 32)), [randn(1, 3, 32, 32)], ["x"])


class SmallSqueezeNet(nn.Module):
    """SqueezeNet 1.0's layout (torchvision Fire modules: squeeze 1x1, then
    concat of expand 1x1 and expand 3x3; ceil-mode max pools; a 1x1 conv
    classifier and global average pool) at reduced width."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=7, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(16, 4, 8, 8),
            Fire(16, 4, 8, 8),
            Fire(16, 8, 16, 16),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(32, 8, 16, 16),
            Fire(32, 8, 24, 24),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5),
            nn.Conv2d(48, num_classes, kernel_size=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


@arch("squeezenet")
def build_squeezenet():
    return Spec(finish(SmallSqueezeNet()), [randn(2, 3, 32, 32)], ["x"])


@arch("shufflenet")
def build_shufflenet():
    model = ShuffleNetV2(stages_repeats=[2, 2, 2],
                         stages_out_channels=[8, 16, 32, 64, 128],
                         num_classes=10)
    return Spec(finish(model, (4, 3, 32, 32)), [randn(1, 3, 32, 32)], ["x"])


class SmallVGG(nn.Module):
    """VGG's layout: 3x3 conv + ReLU blocks and 2x2 max pools, an adaptive
    average pool, then Linear + ReLU + Dropout + Linear."""

    def __init__(self, cfg=(8, "M", 16, "M", 32, 32, "M"), num_classes=10):
        super().__init__()
        layers, c = [], 3
        for v in cfg:
            if v == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(c, v, kernel_size=3, padding=1),
                           nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(c * 2 * 2, 64), nn.ReLU(True), nn.Dropout(p=0.5),
            nn.Linear(64, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


@arch("vgg")
def build_vgg():
    return Spec(finish(SmallVGG()), [randn(2, 3, 32, 32)], ["x"])


# --------------------------------------------------------- transformers ----

class EncoderClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
            batch_first=True)
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


@arch("transformer")
def build_transformer():
    # Default LayerNorm init on purpose: both norms share one weight/bias.
    return Spec(finish(EncoderClassifier(), default_norms=True),
                [randn(2, 8, 32)], ["x"])


class CausalSelfAttention(nn.Module):
    """GPT-2 style attention: one packed Linear for q, k, v, split in
    three; causal attention either with scaled_dot_product_attention or
    written out (QK^T / sqrt(d), triu mask filled with -inf, softmax)."""

    def __init__(self, d_model, n_head, manual):
        super().__init__()
        self.n_head, self.manual = n_head, manual
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, hd).transpose(1, 2)
                   for t in (q, k, v))
        if self.manual:
            att = (q @ k.transpose(-2, -1)) / (hd ** 0.5)
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool,
                                         device=x.device), diagonal=1)
            att = att.masked_fill(mask, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPT(nn.Module):
    """Token + learned position embeddings, one pre-norm decoder block
    (causal self-attention, GELU MLP), final LayerNorm, LM head."""

    def __init__(self, manual, vocab=50, block_size=8, d_model=32, n_head=4):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(block_size, d_model)
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, manual)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return self.lm_head(self.ln_f(x))


@arch("gpt")
def build_gpt():
    return Spec(finish(GPT(manual=False)), [randint(50, 2, 8)], ["input_ids"])


@arch("gpt_manual")
def build_gpt_manual():
    return Spec(finish(GPT(manual=True)), [randint(50, 2, 8)], ["input_ids"])


class TinyViT(nn.Module):
    """Patch embedding conv, cls token, position embedding, one pre-norm
    GELU encoder layer, LayerNorm, head on the cls token."""

    def __init__(self, dim=16, patch=4, image=16, num_classes=3):
        super().__init__()
        n = (image // patch) ** 2
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.5)
        self.encoder = nn.TransformerEncoderLayer(
            dim, 2, 32, dropout=0.0, batch_first=True, norm_first=True,
            activation="gelu")
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])


@arch("vit")
def build_vit():
    return Spec(finish(TinyViT()), [randn(2, 3, 16, 16)], ["x"])


# ------------------------------------------------------- small classifiers ----

class EmbeddingClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(100, 16)
        self.fc = nn.Linear(16, 4)

    def forward(self, ids):
        return self.fc(self.embedding(ids).mean(dim=1))


@arch("embedding_classifier")
def build_embedding_classifier():
    return Spec(finish(EmbeddingClassifier()), [randint(100, 4, 12)],
                ["input_ids"])


@arch("mlp_bn")
def build_mlp_bn():
    model = nn.Sequential(nn.Linear(20, 32), nn.BatchNorm1d(32), nn.ReLU(),
                          nn.Dropout(0.1), nn.Linear(32, 3))
    return Spec(finish(model, (16, 20)), [randn(8, 20)], ["x"])


class Audio1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 8, kernel_size=9, stride=2, padding=4),
            nn.BatchNorm1d(8), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(8, 16, kernel_size=5, padding=2), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


@arch("audio1d")
def build_audio1d():
    return Spec(finish(Audio1d(), (4, 1, 256)), [randn(2, 1, 256)], ["x"])


class RNNClassifier(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(input_size=8, hidden_size=16, num_layers=1,
                        batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


@arch("lstm")
def build_lstm():
    return Spec(finish(RNNClassifier(nn.LSTM)), [randn(2, 5, 8)], ["x"])


@arch("gru")
def build_gru():
    return Spec(finish(RNNClassifier(nn.GRU)), [randn(2, 5, 8)], ["x"])


# ------------------------------------------------------------- exporting ----

def export(model, inputs, input_names, variant, path):
    if variant == "torchscript":
        torch.onnx.export(model, inputs, path, dynamo=False, opset_version=17,
                          do_constant_folding=True)
        return
    opset = 18 if variant == "dynamo18" else None
    with tempfile.TemporaryDirectory() as artifacts:
        torch.onnx.export(model, inputs, path, dynamo=True,
                          external_data=True, opset_version=opset,
                          input_names=input_names, verbose=False,
                          artifacts_dir=artifacts)
    # The exporter keeps initializers under 256 bytes inline; a model with
    # none that large would have an empty .data file: move all out then.
    proto = onnx.load(path, load_external_data=False)
    if not any(t.external_data for t in proto.graph.initializer):
        proto = onnx.load(path)
        onnx.save_model(proto, path, save_as_external_data=True,
                        all_tensors_to_one_file=True,
                        location="model.onnx.data", size_threshold=0)
        proto = onnx.load(path, load_external_data=False)
    strip_metadata(proto)
    onnx.save_model(proto, path)


def strip_metadata(proto):
    """Drops the dynamo exporter's per-node and per-value metadata (stack
    traces with this machine's paths); the graph is unchanged."""
    for node in proto.graph.node:
        del node.metadata_props[:]
    for vi in proto.graph.value_info:
        del vi.metadata_props[:]
    for vi in list(proto.graph.input) + list(proto.graph.output):
        del vi.metadata_props[:]
    for t in proto.graph.initializer:
        del t.metadata_props[:]


def file_name(onnx_name):
    return re.sub(r"[^A-Za-z0-9_.]", "_", onnx_name) + ".npy"


def op_type(node):
    if node.domain in ("", "ai.onnx"):
        return node.op_type
    return "%s::%s" % (node.domain, node.op_type)


def subgraph_ops(nodes):
    """Op types of the graphs nested in the nodes' attributes (Loop, If,
    Scan bodies), recursively."""
    ops = set()
    for node in nodes:
        for attr in node.attribute:
            graphs = [attr.g] if attr.HasField("g") else []
            for g in graphs + list(attr.graphs):
                ops |= {op_type(n) for n in g.node} | subgraph_ops(g.node)
    return ops


def describe(path):
    """What meta.json records about the file itself."""
    proto = onnx.load(path, load_external_data=False)
    g = proto.graph
    opset = {o.domain or "ai.onnx": o.version for o in proto.opset_import}
    external = [t.name for t in g.initializer if t.external_data]
    return {
        "opset": opset.get("ai.onnx"),
        "opset_imports": opset,
        "ir_version": proto.ir_version,
        "ops": sorted({op_type(n) for n in g.node}),
        "subgraph_ops": sorted(subgraph_ops(g.node)),
        "has_functions": len(proto.functions) > 0,
        "functions": [{"domain": f.domain, "name": f.name,
                       "ops": sorted({op_type(n) for n in f.node})}
                      for f in proto.functions],
        "num_nodes": len(g.node),
        "num_constant_nodes": sum(n.op_type == "Constant" for n in g.node),
        "num_initializers": len(g.initializer),
        "num_external_initializers": len(external),
        "initializer_dtypes": sorted({onnx.helper.tensor_dtype_to_np_dtype(
            t.data_type).name for t in g.initializer}),
    }


def reference(model, inputs):
    ref = copy.deepcopy(model).double()
    args = [x.double() if x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        out = ref(*args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o.detach().numpy().astype(np.float32) for o in outs]


def scaled_err(actual, expected):
    worst = 0.0
    for a, e in zip(actual, expected):
        diff = np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)))
        worst = max(worst, float(diff / max(np.max(np.abs(e)), 1e-30)))
    return worst


def graph_io(path):
    g = onnx.load(path, load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    inputs = [(v.name, v.type.tensor_type.elem_type) for v in g.input
              if v.name not in inits]
    outputs = [v.name for v in g.output]
    return inputs, outputs


def run_one(arch_name, spec, variant, out_dir):
    folder = os.path.join(out_dir, "%s_%s" % (arch_name, variant))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    path = os.path.join(folder, "model.onnx")
    try:
        model = copy.deepcopy(spec.model)
        # The exporters print progress and deprecation notes: silence them
        # (a failure is recorded with its message).
        log = io.StringIO()
        with contextlib.redirect_stdout(log), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export(model, spec.inputs, spec.input_names, variant, path)
        meta = {"arch": arch_name, "variant": variant}
        meta.update(describe(path))
        in_io, out_names = graph_io(path)
        if len(in_io) != len(spec.inputs):
            raise RuntimeError("graph has inputs %s for %d model inputs"
                               % ([n for n, _ in in_io], len(spec.inputs)))
        refs = reference(spec.model, spec.inputs)
        if len(out_names) != len(refs):
            raise RuntimeError("graph has outputs %s for %d model outputs"
                               % (out_names, len(refs)))
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        shutil.rmtree(folder, ignore_errors=True)
        message = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # no colours
        return None, "%s: %s" % (type(e).__name__, message[:4000])

    feeds, meta["inputs"], meta["input_dtypes"] = {}, {}, {}
    for (name, _), x in zip(in_io, spec.inputs):
        arr = x.numpy()
        feeds[name] = arr
        meta["inputs"][name] = file_name(name)
        meta["input_dtypes"][name] = str(arr.dtype)
        np.save(os.path.join(folder, file_name(name)), arr)
    meta["outputs"] = {}
    for name, y in zip(out_names, refs):
        fname = "y.npy" if len(refs) == 1 else file_name(name)
        meta["outputs"][name] = fname
        np.save(os.path.join(folder, fname), y)
    meta["output_shapes"] = {n: list(y.shape) for n, y in zip(out_names, refs)}

    try:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(path, opts,
                                    providers=["CPUExecutionProvider"])
        got = sess.run(out_names, feeds)
        meta["ort_scaled_err"] = scaled_err(got, refs)
    except Exception as e:  # noqa: BLE001 - recorded in meta.json
        meta["ort_scaled_err"] = None
        meta["ort_error"] = "%s: %s" % (type(e).__name__, str(e)[:2000])
    try:
        onnx.checker.check_model(path)
        meta["onnx_checker"] = "ok"
    except Exception as e:  # noqa: BLE001 - recorded in meta.json
        meta["onnx_checker"] = "%s: %s" % (type(e).__name__, str(e)[:2000])

    meta["torch_version"] = torch.__version__
    meta["onnx_version"] = onnx.__version__
    meta["onnxscript_version"] = onnxscript.__version__
    meta["onnxruntime_version"] = ort.__version__
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return meta, None


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help="output folder (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=list(ARCHS),
                    help="architectures to export (default: all of %s)"
                    % ", ".join(ARCHS))
    ap.add_argument("--variants", nargs="+", choices=VARIANTS,
                    default=list(VARIANTS),
                    help="export variants (default: all three)")
    args = ap.parse_args(argv)

    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    failures_path = os.path.join(args.out, "failures.json")
    failures = {}
    if os.path.exists(failures_path):
        with open(failures_path) as f:
            failures = json.load(f)

    for name in args.only or list(ARCHS):
        torch.manual_seed(SEED)
        spec = ARCHS[name]()
        nparams = sum(p.numel() for p in spec.model.parameters())
        for variant in args.variants:
            folder = "%s_%s" % (name, variant)
            failures.pop(folder, None)
            meta, error = run_one(name, spec, variant, args.out)
            if error:
                failures[folder] = error
                print("%-34s FAILED: %s" % (folder, error.splitlines()[0]))
                continue
            err = meta["ort_scaled_err"]
            print("%-34s opset %-2s params %6d ort %s  %s"
                  % (folder, meta["opset"], nparams,
                     "%.1e" % err if err is not None else "ERROR",
                     " ".join(meta["ops"])))

    with open(failures_path, "w") as f:
        json.dump(failures, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
