"""The networks of :mod:`dlc.models` written in PyTorch, from the same
published definitions: the independent references the tests and the
benchmark check dlc against (and export to ONNX for onnxruntime).

Module names match dlc.models', so ``reference(model)`` builds the PyTorch
network of a dlc model with the very same weights. Needs ``torch``; its
import needs nothing of dlc (dlc.models is imported where it is used), so
tools/gpu/device_check.py loads it by path on a GPU machine without dlc.
"""

import math

import numpy as np
import torch
from torch import nn

__all__ = ["reference"]


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return torch.relu(out + shortcut)


class ResNet18(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin = 64
        for index, (cout, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
            setattr(self, f"layer{index + 1}",
                    nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(torch.mean(x, dim=(2, 3)), 1))


class ConvBNReLU6(nn.Module):
    def __init__(self, cin, cout, kernel, stride, groups):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups,
                              bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.clamp(self.bn(self.conv(x)), 0, 6)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        self.expand = ConvBNReLU6(cin, hidden, 1, 1, 1) if expand != 1 else None
        self.depthwise = ConvBNReLU6(hidden, hidden, 3, stride, hidden)
        self.project = nn.Conv2d(hidden, cout, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = self.expand(x) if self.expand is not None else x
        y = self.project_bn(self.project(self.depthwise(y)))
        return x + y if self.use_residual else y


class MobileNetV2(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.stem = ConvBNReLU6(3, 32, 3, 2, 1)
        blocks, cin = [], 32
        from .models import MOBILENET_V2_SETTINGS
        for t, c, n, s in MOBILENET_V2_SETTINGS:
            for i in range(n):
                blocks.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        self.blocks = nn.Sequential(*blocks)
        self.head = ConvBNReLU6(cin, 1280, 1, 1, 1)
        self.classifier = nn.Linear(1280, num_classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.classifier(torch.flatten(torch.mean(x, dim=(2, 3)), 1))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate, eps):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attention_output = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x):
        batch, seq, hidden = x.shape
        size = hidden // self.heads

        def heads(t):
            return t.reshape(batch, seq, self.heads, size).transpose(1, 2)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = q @ k.transpose(2, 3) / math.sqrt(size)
        context = torch.softmax(scores, dim=-1) @ v
        context = context.transpose(1, 2).reshape(batch, seq, hidden)
        x = self.attention_norm(x + self.attention_output(context))
        return self.output_norm(
            x + self.output(torch.nn.functional.gelu(self.intermediate(x))))


def reference(model):
    """The PyTorch network of a dlc.models network, with its weights, in
    inference mode (float32)."""
    from . import models
    if isinstance(model, models.ResNet18):
        net = ResNet18(model.fc.weight.shape[0])
    elif isinstance(model, models.MobileNetV2):
        net = MobileNetV2(model.classifier.weight.shape[0])
    elif isinstance(model, models.BertLayer):
        net = BertLayer(model.query.weight.shape[0], model.heads,
                        model.intermediate.weight.shape[0], model.attention_norm.eps)
    else:
        raise TypeError(f"no PyTorch reference for {type(model).__name__}")
    state = {name: torch.from_numpy(np.ascontiguousarray(value))
             for name, value in model.state_dict().items()}
    expected = {name for name in net.state_dict() if not name.endswith("num_batches_tracked")}
    if set(state) != expected:
        raise ValueError(f"dlc and PyTorch definitions differ: "
                         f"{sorted(set(state) ^ expected)[:6]}")
    net.load_state_dict(state, strict=False)
    return net.eval()
