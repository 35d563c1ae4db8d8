"""PyTorch models for the importer tests, written after their published
definitions (torchvision's ResNet, MobileNetV2, EfficientNet and
VisionTransformer; Hugging Face's BertLayer; GPT-2's block as in
Hugging Face's GPT2Block / nanoGPT), kept small so the suite stays fast.

torchvision itself is not a dependency: the PyPI wheel of torchvision 0.28
fails to load its operators next to the CPU build of torch 2.13. These are the
same module structures, layer for layer (names aside), at random weights.
"""

import math
from functools import partial

import torch
from torch import nn
from torch.nn import functional as F


def _randomize_norms(model, seed=0):
    """Random running statistics and affine parameters for every norm layer
    (fresh ones are the identity, which would hide mistakes)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
    return model


# -- ResNet-18 (torchvision.models.resnet) ----------------------------------------------

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes=10):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], 2)
        self.layer3 = self._make_layer(256, layers[2], 2)
        self.layer4 = self._make_layer(512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# -- MobileNetV2 (torchvision.models.mobilenetv2) ---------------------------------------

def _make_divisible(v, divisor, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, cin, cout, kernel_size=3, stride=1, groups=1,
                 activation_layer=nn.ReLU6):
        layers = [nn.Conv2d(cin, cout, kernel_size, stride, (kernel_size - 1) // 2,
                            groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1))
        layers += [Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                   nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=10, width_mult=1.0):
        super().__init__()
        input_channel, last_channel = 32, 1280
        setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                   [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
        input_channel = _make_divisible(input_channel * width_mult, 8)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), 8)
        features = [Conv2dNormActivation(3, input_channel, stride=2)]
        for t, c, n, s in setting:
            output_channel = _make_divisible(c * width_mult, 8)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel,
                                                 s if i == 0 else 1, t))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=0.2),
                                        nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


# -- EfficientNet-B0 (torchvision.models.efficientnet) -----------------------------------

class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.SiLU()
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        scale = self.fc2(self.activation(self.fc1(self.avgpool(x))))
        return self.scale_activation(scale) * x


class MBConv(nn.Module):
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels):
        super().__init__()
        self.use_res_connect = stride == 1 and input_channels == out_channels
        layers = []
        expanded = _make_divisible(input_channels * expand_ratio, 8)
        if expanded != input_channels:
            layers.append(Conv2dNormActivation(input_channels, expanded, kernel_size=1,
                                               activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=kernel, stride=stride,
                                           groups=expanded, activation_layer=nn.SiLU))
        layers.append(SqueezeExcitation(expanded, max(1, input_channels // 4)))
        layers.append(Conv2dNormActivation(expanded, out_channels, kernel_size=1,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        result = self.block(x)
        return result + x if self.use_res_connect else result  # stochastic depth: eval


class EfficientNetB0(nn.Module):
    # (expand_ratio, kernel, stride, input_channels, out_channels, num_layers)
    SETTING = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
               (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
               (6, 3, 1, 192, 320, 1)]

    def __init__(self, num_classes=10):
        super().__init__()
        layers = [Conv2dNormActivation(3, 32, kernel_size=3, stride=2, activation_layer=nn.SiLU)]
        for expand, kernel, stride, cin, cout, n in self.SETTING:
            stage = []
            for i in range(n):
                stage.append(MBConv(expand, kernel, stride if i == 0 else 1,
                                    cin if i == 0 else cout, cout))
            layers.append(nn.Sequential(*stage))
        layers.append(Conv2dNormActivation(320, 1280, kernel_size=1, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=0.2, inplace=True),
                                        nn.Linear(1280, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


# -- BERT encoder layer (transformers' BertLayer, eval mode) --------------------------------

class BertLayer(nn.Module):
    def __init__(self, hidden=64, heads=4, intermediate=128, eps=1e-12):
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

    def forward(self, x, attention_mask):
        batch, seq, hidden = x.shape
        size = hidden // self.heads

        def heads(t):
            return t.view(batch, seq, self.heads, size).permute(0, 2, 1, 3)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(size)
        # The extended mask: 0 where attended, a large negative where masked.
        extended = (1.0 - attention_mask[:, None, None, :]) * torch.finfo(x.dtype).min
        probs = nn.functional.softmax(scores + extended, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        context = context.view(batch, seq, hidden)
        x = self.attention_norm(self.attention_output(context) + x)
        return self.output_norm(self.output(F.gelu(self.intermediate(x))) + x)


# -- GPT-2 block (transformers' GPT2Block / nanoGPT) -----------------------------------------

class GPT2Block(nn.Module):
    def __init__(self, d=64, heads=4, ctx=16):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads
        self.register_buffer("bias", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

    @staticmethod
    def gelu_new(h):
        return 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (h + 0.044715 * torch.pow(h, 3.0))))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(self.gelu_new(self.c_fc(self.ln_2(x))))


# -- Vision Transformer (torchvision.models.vision_transformer) --------------------------------

class MLPBlock(nn.Sequential):
    def __init__(self, in_dim, mlp_dim):
        super().__init__(nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(0.0),
                         nn.Linear(mlp_dim, in_dim), nn.Dropout(0.0))


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim):
        super().__init__()
        norm = partial(nn.LayerNorm, eps=1e-6)
        self.ln_1 = norm(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, batch_first=True)
        self.ln_2 = norm(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim)

    def forward(self, input):
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = x + input
        return x + self.mlp(self.ln_2(x))


class VisionTransformer(nn.Module):
    def __init__(self, image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                 mlp_dim=128, num_classes=10):
        super().__init__()
        self.patch_size, self.hidden_dim = patch_size, hidden_dim
        self.conv_proj = nn.Conv2d(3, hidden_dim, patch_size, patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1
        self.class_token = nn.Parameter(torch.randn(1, 1, hidden_dim) * 0.02)
        self.pos_embedding = nn.Parameter(torch.randn(1, seq_length, hidden_dim) * 0.02)
        self.layers = nn.Sequential(*[EncoderBlock(num_heads, hidden_dim, mlp_dim)
                                      for _ in range(num_layers)])
        self.ln = nn.LayerNorm(hidden_dim, eps=1e-6)
        self.heads = nn.Linear(hidden_dim, num_classes)

    def forward(self, x):
        n, _, h, w = x.shape
        x = self.conv_proj(x).reshape(n, self.hidden_dim, -1).permute(0, 2, 1)
        x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.ln(self.layers(x + self.pos_embedding))
        return self.heads(x[:, 0])


def zoo():
    """{name: (module in eval mode, example inputs)} at small sizes."""
    torch.manual_seed(0)
    mask = torch.ones(2, 8)
    mask[1, 5:] = 0
    return {
        "resnet18": (_randomize_norms(ResNet()).eval(), (torch.randn(1, 3, 32, 32),)),
        "mobilenet_v2": (_randomize_norms(MobileNetV2()).eval(), (torch.randn(1, 3, 32, 32),)),
        "efficientnet_b0": (_randomize_norms(EfficientNetB0()).eval(),
                            (torch.randn(1, 3, 32, 32),)),
        "bert_layer": (_randomize_norms(BertLayer()).eval(), (torch.randn(2, 8, 64), mask)),
        "gpt2_block": (_randomize_norms(GPT2Block()).eval(), (torch.randn(2, 16, 64),)),
        "vit": (_randomize_norms(VisionTransformer()).eval(), (torch.randn(2, 3, 32, 32),)),
    }
