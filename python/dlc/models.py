"""dlc.models: real networks written in dlc.nn from their published
definitions, with random weights (for benchmarks and end-to-end tests).

- :func:`resnet18` -- He et al., "Deep Residual Learning for Image
  Recognition" (2015), the 18-layer network of torchvision: a 7x7/2 stem,
  3x3 max pooling, four stages of two basic blocks (64, 128, 256, 512
  channels; 1x1/2 projections where the shape changes), global average
  pooling and a 1000-way linear classifier.
- :func:`mobilenet_v2` -- Sandler et al., "MobileNetV2: Inverted Residuals
  and Linear Bottlenecks" (2018): inverted residual blocks (1x1 expansion,
  3x3 depthwise, 1x1 linear projection, ReLU6) with the paper's table of
  (t, c, n, s), width 1.0.
- :class:`BertLayer` -- one encoder layer of BERT-base (Devlin et al. 2018):
  hidden 768, 12 heads, GELU MLP of 3072, post-layer-norm residuals.

The attribute names follow PyTorch's (torchvision's for the CNNs), so a
state dict maps one to one onto the PyTorch definitions of
:mod:`dlc.torch_models`, which serve as the independent references.
Batch-norm statistics are randomized (:func:`randomize_batch_norms`), so
folding them is not trivially the identity.
"""

import numpy as np

from . import nn, ops

__all__ = ["resnet18", "mobilenet_v2", "BertLayer", "randomize_batch_norms",
           "MOBILENET_V2_SETTINGS"]


def randomize_batch_norms(model, rng):
    """Gives every BatchNorm2d of `model` non-trivial statistics and affine
    parameters (the state of a trained network, roughly)."""
    for _, module in model.named_modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.weight.shape[0]
            module.weight = rng.uniform(0.5, 1.5, n).astype(np.float32)
            module.bias = rng.uniform(-0.2, 0.2, n).astype(np.float32)
            module.running_mean = rng.uniform(-0.2, 0.2, n).astype(np.float32)
            module.running_var = rng.uniform(0.5, 2.0, n).astype(np.float32)
    return model


# -- ResNet-18 -------------------------------------------------------------------------

class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norms, and the shortcut (a 1x1
    projection with a batch norm where the shape changes)."""

    def __init__(self, cin, cout, stride, rng):
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False, rng=rng)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False, rng=rng)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = [nn.Conv2d(cin, cout, 1, stride, bias=False, rng=rng),
                               nn.BatchNorm2d(cout)]

    def forward(self, x):
        out = ops.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x
        if self.downsample is not None:
            conv, bn = self.downsample
            shortcut = bn(conv(x))
        return ops.relu(out + shortcut)


class ResNet18(nn.Module):
    def __init__(self, num_classes, rng):
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False, rng=rng)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin = 64
        for index, (cout, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
            setattr(self, f"layer{index + 1}", [BasicBlock(cin, cout, stride, rng),
                                                BasicBlock(cout, cout, 1, rng)])
            cin = cout
        self.fc = nn.Linear(512, num_classes, rng=rng)

    def forward(self, x):
        x = self.maxpool(ops.relu(self.bn1(self.conv1(x))))
        for stage in (self.layer1, self.layer2, self.layer3, self.layer4):
            for block in stage:
                x = block(x)
        return self.fc(ops.flatten(ops.global_avg_pool2d(x), 1))


def resnet18(num_classes=1000, rng=None):
    """ResNet-18 (NCHW input [N, 3, H, W]) with random weights and batch-norm
    statistics."""
    rng = np.random.default_rng(rng)
    return randomize_batch_norms(ResNet18(num_classes, rng), rng)


# -- MobileNetV2 -----------------------------------------------------------------------

#: The paper's table: expansion t, output channels c, repeats n, stride s.
MOBILENET_V2_SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                         (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class ConvBNReLU6(nn.Module):
    def __init__(self, cin, cout, kernel, stride, groups, rng):
        self.conv = nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2,
                              groups=groups, bias=False, rng=rng)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return ops.relu6(self.bn(self.conv(x)))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand, rng):
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        self.expand = ConvBNReLU6(cin, hidden, 1, 1, 1, rng) if expand != 1 else None
        self.depthwise = ConvBNReLU6(hidden, hidden, 3, stride, hidden, rng)
        self.project = nn.Conv2d(hidden, cout, 1, bias=False, rng=rng)
        self.project_bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = self.expand(x) if self.expand is not None else x
        y = self.project_bn(self.project(self.depthwise(y)))
        return x + y if self.use_residual else y


class MobileNetV2(nn.Module):
    def __init__(self, num_classes, rng):
        self.stem = ConvBNReLU6(3, 32, 3, 2, 1, rng)
        blocks, cin = [], 32
        for t, c, n, s in MOBILENET_V2_SETTINGS:
            for i in range(n):
                blocks.append(InvertedResidual(cin, c, s if i == 0 else 1, t, rng))
                cin = c
        self.blocks = blocks
        self.head = ConvBNReLU6(cin, 1280, 1, 1, 1, rng)
        self.classifier = nn.Linear(1280, num_classes, rng=rng)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = self.head(x)
        return self.classifier(ops.flatten(ops.global_avg_pool2d(x), 1))


def mobilenet_v2(num_classes=1000, rng=None):
    """MobileNetV2, width 1.0 (NCHW input [N, 3, H, W]), with random weights
    and batch-norm statistics."""
    rng = np.random.default_rng(rng)
    return randomize_batch_norms(MobileNetV2(num_classes, rng), rng)


# -- BERT-base encoder layer -----------------------------------------------------------

class BertLayer(nn.Module):
    """One BERT encoder layer on [batch, seq, hidden]: multi-head
    self-attention and a GELU MLP, each with a residual and a layer norm
    after it (BERT's post-LN). Defaults are BERT-base's."""

    def __init__(self, hidden=768, heads=12, intermediate=3072, eps=1e-12, rng=None):
        rng = np.random.default_rng(rng)
        self.heads = heads
        self.query = nn.Linear(hidden, hidden, rng=rng)
        self.key = nn.Linear(hidden, hidden, rng=rng)
        self.value = nn.Linear(hidden, hidden, rng=rng)
        self.attention_output = nn.Linear(hidden, hidden, rng=rng)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, intermediate, rng=rng)
        self.output = nn.Linear(intermediate, hidden, rng=rng)
        self.output_norm = nn.LayerNorm(hidden, eps=eps)
        for norm in (self.attention_norm, self.output_norm):
            norm.weight = rng.uniform(0.5, 1.5, hidden).astype(np.float32)
            norm.bias = rng.uniform(-0.2, 0.2, hidden).astype(np.float32)

    def _heads(self, t):
        seq, hidden = ops.dim(t, 1), t.shape[2]   # seq: a dlc.Size when dynamic
        return ops.transpose(t.reshape(-1, seq, self.heads, hidden // self.heads),
                             (0, 2, 1, 3))

    def forward(self, x):
        seq, hidden = ops.dim(x, 1), x.shape[2]
        q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        scores = q @ ops.transpose(k, (0, 1, 3, 2)) / float(np.sqrt(hidden // self.heads))
        context = ops.softmax(scores, axis=-1) @ v
        context = ops.transpose(context, (0, 2, 1, 3)).reshape(-1, seq, hidden)
        x = self.attention_norm(x + self.attention_output(context))
        return self.output_norm(x + self.output(ops.gelu(self.intermediate(x))))
