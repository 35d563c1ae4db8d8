"""The zoo's models: architectures of `transformers` and `timm`, built from
small configurations with random weights (nothing is downloaded), each with
example inputs.

A :class:`ZooModel` names its library and architecture and knows how to build
``(module, example_args)``: the module in eval mode, the inputs as torch
tensors in the order ``forward`` takes them. The seed is fixed per model so a
failure reproduces. Every builder keeps the sizes small (hidden width 32, two
layers, sequence 7, images 32²–64²) so that the whole zoo compiles in minutes,
while the operators are those of the full-size models.
"""

import dataclasses
import zlib

__all__ = ["ZooModel", "transformers_models", "timm_models", "all_models", "find",
           "test_tier"]

#: the text inputs' length: odd on purpose (not a multiple of a vector width)
SEQ = 7
BATCH = 2


@dataclasses.dataclass(frozen=True)
class ZooModel:
    library: str            # "transformers" or "timm"
    name: str               # architecture: "BertModel", "resnet18", ...
    family: str             # "encoder", "decoder", "encoder-decoder", "vision", "cnn", ...
    builder: object = dataclasses.field(repr=False, compare=False)
    # a mismatch is checked against the module run in float64: dlc's error
    # within a few times eager float32's own is precision, not a bug (the
    # importer fuzzer's random programs; zoo models are held to RTOL alone)
    reference64: bool = False

    @property
    def key(self):
        return f"{self.library}/{self.name}"

    def build(self):
        """(module, example_args): the module in eval mode, random weights
        from a seed fixed by the model's name, in the state of a trained
        network (:func:`dlc.zoo.weights.trained_like`: no zero biases or
        identity norms for the graph passes to fold away)."""
        import torch

        from .weights import trained_like
        seed = zlib.crc32(self.key.encode())
        torch.manual_seed(seed)
        module, args = self.builder()
        return trained_like(module, seed).eval(), tuple(args)


# --------------------------------------------------------------------------
# transformers

_TEXT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=37, max_position_embeddings=64)
_DECODER = dict(_TEXT, num_key_value_heads=2, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _text_inputs(vocab=99, mask=True, batch=BATCH, seq=SEQ, token_types=False):
    import torch
    ids = torch.randint(3, vocab, (batch, seq))
    args = [ids]
    if mask:
        attention = torch.ones(batch, seq, dtype=torch.int64)
        attention[0, seq - 2:] = 0          # padding on the right of one row
        args.append(attention)
    if token_types:
        args.append(torch.zeros(batch, seq, dtype=torch.int64))
    return args


def _hf(model_type, cls_name, inputs=None, **config):
    def build():
        import transformers
        cfg = transformers.AutoConfig.for_model(model_type, **config)
        module = getattr(transformers, cls_name)(cfg)
        module.config.use_cache = False
        if inputs is None:   # text: by keyword (the second parameter is not always the mask)
            module._zoo_keys = ["input_ids", "attention_mask"]
            return _wrap(module), _text_inputs(getattr(cfg, "vocab_size", 99))
        return _wrap(module), inputs()
    return build


_WRAPPER = None


def _wrap(module):
    """The model called with positional tensors, returning its first output
    as one tensor (logits, last hidden state): what the importers compile."""
    global _WRAPPER
    import torch
    if _WRAPPER is None:
        class Wrapped(torch.nn.Module):
            def __init__(self, inner, keys=None):
                super().__init__()
                self.inner = inner
                self.keys = keys

            def forward(self, *args):
                if self.keys:
                    out = self.inner(**dict(zip(self.keys, args)))
                else:
                    out = self.inner(*args)
                if isinstance(out, (tuple, list)):
                    return out[0]
                for name in ("logits", "last_hidden_state", "image_embeds",
                             "pooler_output"):
                    value = getattr(out, name, None)
                    if value is not None:
                        return value
                return out[0]
        _WRAPPER = Wrapped
    keys = getattr(module, "_zoo_keys", None)
    return _WRAPPER(module, keys)


def _keyed(model_type, cls_name, keys, inputs, **config):
    """A model called with keyword inputs (`keys`, in the order of `inputs()`)."""
    def build():
        import transformers
        cfg = transformers.AutoConfig.for_model(model_type, **config)
        module = getattr(transformers, cls_name)(cfg)
        module.config.use_cache = False
        module._zoo_keys = keys
        return _wrap(module), inputs()
    return build


def _pixels(size=32, channels=3, batch=BATCH):
    def inputs():
        import torch
        return [torch.randn(batch, channels, size, size)]
    return inputs


def _seq2seq_inputs(vocab=99):
    def inputs():
        ids, mask = _text_inputs(vocab)
        import torch
        decoder = torch.randint(3, vocab, (BATCH, 5))
        return [ids, mask, decoder]
    return inputs


def _whisper_inputs():
    import torch
    features = torch.randn(BATCH, 16, 60)
    decoder = torch.randint(3, 99, (BATCH, 5))
    return [features, decoder]


def _clip_inputs():
    import torch
    ids, mask = _text_inputs(99)
    return [ids, torch.randn(BATCH, 3, 32, 32), mask]


def transformers_models():
    enc = "encoder"
    dec = "decoder"
    s2s = "encoder-decoder"
    vis = "vision"
    models = [
        # encoders (called with an attention mask, the first row padded)
        ("bert", "BertModel", enc, dict(_TEXT)),
        ("bert", "BertForSequenceClassification", enc, dict(_TEXT)),
        ("roberta", "RobertaModel", enc, dict(_TEXT, pad_token_id=1)),
        ("xlm-roberta", "XLMRobertaModel", enc, dict(_TEXT, pad_token_id=1)),
        ("camembert", "CamembertModel", enc, dict(_TEXT, pad_token_id=1)),
        ("albert", "AlbertModel", enc, dict(_TEXT, embedding_size=16)),
        ("distilbert", "DistilBertModel", enc,
         dict(vocab_size=99, dim=32, n_layers=2, n_heads=4, hidden_dim=37,
              max_position_embeddings=64)),
        ("electra", "ElectraModel", enc, dict(_TEXT, embedding_size=16)),
        ("deberta-v2", "DebertaV2Model", enc, dict(_TEXT)),
        ("deberta", "DebertaModel", enc, dict(_TEXT)),
        ("mpnet", "MPNetModel", enc, dict(_TEXT)),
        ("mobilebert", "MobileBertModel", enc,
         dict(_TEXT, embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16,
              num_feedforward_networks=2)),
        ("roformer", "RoFormerModel", enc, dict(_TEXT, embedding_size=32)),
        ("megatron-bert", "MegatronBertModel", enc, dict(_TEXT)),
        ("esm", "EsmModel", enc, dict(_TEXT, pad_token_id=1)),
        # decoders (causal language models)
        ("gpt2", "GPT2LMHeadModel", dec,
         dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64)),
        ("gpt_neo", "GPTNeoForCausalLM", dec,
         dict(vocab_size=99, hidden_size=32, num_layers=2, num_heads=4,
              attention_types=[[["global", "local"], 1]], window_size=4,
              max_position_embeddings=64)),
        ("gptj", "GPTJForCausalLM", dec,
         dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64)),
        ("gpt_neox", "GPTNeoXForCausalLM", dec, dict(_TEXT)),
        ("opt", "OPTForCausalLM", dec,
         dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              ffn_dim=37, max_position_embeddings=64, word_embed_proj_dim=32)),
        ("bloom", "BloomForCausalLM", dec,
         dict(vocab_size=99, hidden_size=32, n_layer=2, n_head=4)),
        ("falcon", "FalconForCausalLM", dec,
         dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4)),
        ("llama", "LlamaForCausalLM", dec, dict(_DECODER)),
        ("mistral", "MistralForCausalLM", dec, dict(_DECODER, sliding_window=4)),
        ("mixtral", "MixtralForCausalLM", dec,
         # (grouped expert matmuls want 16-byte strides: intermediate 48)
         dict(_DECODER, intermediate_size=48, num_local_experts=4, num_experts_per_tok=2)),
        ("qwen2", "Qwen2ForCausalLM", dec, dict(_DECODER)),
        ("qwen3", "Qwen3ForCausalLM", dec, dict(_DECODER, head_dim=8)),
        ("phi", "PhiForCausalLM", dec, dict(_TEXT)),
        ("phi3", "Phi3ForCausalLM", dec, dict(_DECODER)),
        ("gemma", "GemmaForCausalLM", dec, dict(_DECODER, head_dim=8)),
        ("gemma2", "Gemma2ForCausalLM", dec, dict(_DECODER, head_dim=8, sliding_window=4)),
        ("stablelm", "StableLmForCausalLM", dec, dict(_DECODER)),
        ("olmo", "OlmoForCausalLM", dec, dict(_DECODER)),
        ("starcoder2", "Starcoder2ForCausalLM", dec, dict(_DECODER)),
        ("codegen", "CodeGenForCausalLM", dec,
         dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64,
              n_ctx=64)),
        ("xglm", "XGLMForCausalLM", dec,
         dict(vocab_size=99, d_model=32, num_layers=2, attention_heads=4, ffn_dim=37,
              max_position_embeddings=64)),
    ]
    result = [ZooModel("transformers", cls, family, _hf(t, cls, **cfg))
              for t, cls, family, cfg in models]
    seq2seq = dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2,
                   encoder_attention_heads=4, decoder_attention_heads=4,
                   encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64,
                   pad_token_id=0, decoder_start_token_id=2)
    keys3 = ["input_ids", "attention_mask", "decoder_input_ids"]
    result += [
        ZooModel("transformers", "T5Model", s2s,
                 _keyed("t5", "T5Model", keys3, _seq2seq_inputs(),
                        vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2,
                        num_heads=4, relative_attention_num_buckets=8)),
        ZooModel("transformers", "T5EncoderModel", enc,
                 _keyed("t5", "T5EncoderModel", ["input_ids", "attention_mask"],
                        lambda: _text_inputs(99),
                        vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2,
                        num_heads=4, relative_attention_num_buckets=8)),
        ZooModel("transformers", "BartModel", s2s,
                 _keyed("bart", "BartModel", keys3, _seq2seq_inputs(), **seq2seq)),
        ZooModel("transformers", "MarianMTModel", s2s,
                 _keyed("marian", "MarianMTModel", keys3, _seq2seq_inputs(), **seq2seq)),
        ZooModel("transformers", "PegasusModel", s2s,
                 _keyed("pegasus", "PegasusModel", keys3, _seq2seq_inputs(), **seq2seq)),
        ZooModel("transformers", "WhisperModel", s2s,
                 _keyed("whisper", "WhisperModel", ["input_features", "decoder_input_ids"],
                        _whisper_inputs,
                        **dict(seq2seq, num_mel_bins=16, max_source_positions=30,
                               max_target_positions=64))),
    ]
    vision = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=37, image_size=32, patch_size=8)
    result += [
        ZooModel("transformers", "ViTModel", vis, _hf("vit", "ViTModel", _pixels(), **vision)),
        ZooModel("transformers", "DeiTModel", vis, _hf("deit", "DeiTModel", _pixels(), **vision)),
        ZooModel("transformers", "BeitModel", vis,
                 _hf("beit", "BeitModel", _pixels(), **vision,
                     use_relative_position_bias=True)),
        ZooModel("transformers", "Dinov2Model", vis,
                 _hf("dinov2", "Dinov2Model", _pixels(), **vision)),
        ZooModel("transformers", "SwinModel", vis,
                 _hf("swin", "SwinModel", _pixels(64), image_size=64, patch_size=4,
                     embed_dim=16, depths=[1, 2], num_heads=[2, 4], window_size=4)),
        ZooModel("transformers", "ConvNextModel", vis,
                 _hf("convnext", "ConvNextModel", _pixels(64), hidden_sizes=[8, 16, 24, 32],
                     depths=[1, 1, 2, 1])),
        ZooModel("transformers", "ResNetModel", vis,
                 _hf("resnet", "ResNetModel", _pixels(64), hidden_sizes=[8, 16, 24, 32],
                     depths=[1, 1, 1, 1], embedding_size=8)),
        ZooModel("transformers", "SegformerModel", vis,
                 _hf("segformer", "SegformerModel", _pixels(64), hidden_sizes=[8, 16, 24, 32],
                     depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 2, 4],
                     decoder_hidden_size=32)),
        ZooModel("transformers", "MobileViTModel", vis,
                 _hf("mobilevit", "MobileViTModel", _pixels(64), image_size=64,
                     hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32])),
        ZooModel("transformers", "CLIPModel", "multimodal",
                 _keyed("clip", "CLIPModel", ["input_ids", "pixel_values", "attention_mask"],
                        _clip_inputs,
                        text_config=dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=4, intermediate_size=37,
                                         max_position_embeddings=64),
                        vision_config=dict(hidden_size=32, num_hidden_layers=2,
                                           num_attention_heads=4, intermediate_size=37,
                                           image_size=32, patch_size=8),
                        projection_dim=16)),
    ]
    return result


# --------------------------------------------------------------------------
# timm

#: one small member per timm family (timm.list_models()), with the image
#: side it is built for and, where the constructor takes them, smaller depths
#: (the blocks, stems and heads stay the family's own).
_L1 = dict(layers=(1, 1, 1, 1))
_D2 = dict(depth=2)
_TIMM = [
    ("resnet18", 32, {}), ("resnet50", 32, _L1), ("resnext26ts", 32, {}),
    ("seresnext26d_32x4d", 32, _L1), ("resnetv2_50", 32, _L1), ("wide_resnet50_2", 32, _L1),
    ("res2net50_14w_8s", 32, _L1), ("resnest14d", 32, {}), ("regnetx_002", 32, {}),
    ("regnety_002", 32, {}), ("regnetz_b16", 32, {}),
    ("densenet121", 32, dict(block_config=(2, 2, 2, 2))), ("dpn48b", 32, {}),
    ("vgg11", 32, dict(mlp_ratio=1 / 64)), ("inception_v3", 75, {}), ("inception_v4", 75, {}),
    ("xception41", 32, {}), ("efficientnet_b0", 32, {}), ("efficientnetv2_rw_t", 32, {}),
    ("tf_efficientnet_lite0", 32, {}), ("mobilenetv2_050", 32, {}),
    ("mobilenetv3_small_050", 32, {}), ("mobilenetv4_conv_small", 32, {}),
    ("mnasnet_050", 32, {}), ("fbnetc_100", 32, {}), ("ghostnet_050", 32, {}),
    ("lcnet_050", 32, {}), ("mixnet_s", 32, {}), ("rexnet_100", 32, {}),
    ("hardcorenas_a", 32, {}), ("tinynet_e", 32, {}), ("repvgg_a0", 32, {}),
    ("mobileone_s0", 32, {}), ("dla34", 32, {}), ("hrnet_w18_small", 64, {}),
    ("cspresnet50", 32, {}), ("cspdarknet53", 64, {}), ("darknet17", 32, {}),
    ("selecsls42b", 32, {}), ("vovnet39a", 32, {}), ("ese_vovnet19b_dw", 32, {}),
    ("tresnet_m", 64, dict(layers=[1, 1, 1, 1])), ("nf_resnet26", 32, {}),
    ("nfnet_l0", 32, {}), ("dm_nfnet_f0", 32, {}), ("rdnet_tiny", 32, {}),
    ("convnext_atto", 32, {}), ("convnextv2_atto", 32, {}), ("efficientformer_l1", 224, {}),
    ("efficientformerv2_s0", 64, {}), ("fastvit_t8", 64, {}), ("repvit_m0_9", 64, {}),
    ("mobilevit_xxs", 64, {}), ("mobilevitv2_050", 64, {}),
    ("vit_tiny_patch16_224", 32, _D2), ("deit_tiny_patch16_224", 32, _D2),
    ("beit_base_patch16_224", 32, dict(depth=2, embed_dim=64, num_heads=2)),
    ("eva02_tiny_patch14_224", 28, _D2), ("cait_xxs24_224", 32, _D2),
    ("xcit_nano_12_p16_224", 32, _D2), ("swin_tiny_patch4_window7_224", 224,
                                        dict(depths=(1, 1, 1, 1), embed_dim=32)),
    ("swinv2_cr_tiny_224", 224, dict(depths=(1, 1, 1, 1), embed_dim=48)),
    ("pit_ti_224", 32, {}), ("levit_128s", 224, {}), ("crossvit_tiny_240", 240, {}),
    ("coat_lite_tiny", 32, {}), ("twins_svt_small", 32, {}), ("pvt_v2_b0", 32, {}),
    ("poolformer_s12", 32, {}), ("convmixer_768_32", 32, dict(depth=2)),
    ("mixer_s16_224", 32, dict(num_blocks=2)), ("resmlp_12_224", 32, _D2),
    ("gmlp_ti16_224", 32, dict(num_blocks=2)), ("convit_tiny", 32, _D2),
    ("tnt_s_patch16_224", 32, _D2), ("visformer_tiny", 32, {}), ("gcvit_xxtiny", 224, {}),
    ("maxvit_nano_rw_256", 256, {}), ("coatnet_nano_rw_224", 224, {}),
    ("edgenext_xx_small", 64, {}), ("sequencer2d_s", 32, {}), ("inception_next_tiny", 32, {}),
    ("hgnet_tiny", 32, {}), ("hgnetv2_b0", 32, {}), ("ghostnetv2_100", 64, {}),
    ("fasternet_t0", 32, {}), ("starnet_s050", 32, {}), ("mambaout_femto", 32, {}),
    ("focalnet_tiny_srf", 32, {}), ("davit_tiny", 32, {}), ("nest_tiny", 32, {}),
    ("halonet26t", 256, {}), ("botnet26t_256", 256, {}), ("lambda_resnet26t", 128, {}),
    ("skresnet18", 32, {}), ("cs3darknet_focus_s", 32, {}), ("gernet_s", 32, {}),
    ("vit_small_patch16_224", 32, _D2),
]


def _timm(name, size, shrink):
    def build():
        import timm
        import torch
        model = None
        for kwargs in (dict(shrink, img_size=size), shrink, dict(img_size=size), {}):
            try:   # the sizes this model's constructor takes
                model = timm.create_model(name, pretrained=False, num_classes=10, **kwargs)
                break
            except TypeError:
                continue
        if model is None:
            model = timm.create_model(name, pretrained=False, num_classes=10)
        return model, [torch.randn(1, 3, size, size)]
    return build


def timm_models():
    return [ZooModel("timm", name, "timm", _timm(name, size, shrink))
            for name, size, shrink in _TIMM]


def all_models():
    return transformers_models() + timm_models()


def find(key):
    """The zoo model named `key` ("transformers/BertModel", "timm/resnet18"),
    or the importer fuzzer's random program "random/<seed>/<index>[/<steps>]"
    (:mod:`dlc.zoo.random_models`)."""
    if key.startswith("random/"):
        parts = key.split("/")[1:]
        seed, index = int(parts[0]), int(parts[1])
        steps = int(parts[2]) if len(parts) > 2 else None
        from . import random_models
        return ZooModel("random", "/".join(parts), "program",
                        lambda: random_models.build(seed, index, steps), reference64=True)
    for model in all_models():
        if model.key == key:
            return model
    raise KeyError(f"no zoo model {key!r}")


#: the timm architectures of make test's tier (through from_torch): the 50 of
#: the catalog that compile fastest (a quarter of a minute or less each on
#: two cores); `make zoo` runs all of them through every frontend
_TIER_TIMM = {
    "beit_base_patch16_224", "botnet26t_256", "cait_xxs24_224", "convit_tiny",
    "convnext_atto", "convnextv2_atto", "cs3darknet_focus_s",
    "deit_tiny_patch16_224", "densenet121", "dla34", "dpn48b", "edgenext_xx_small",
    "efficientnet_b0", "fasternet_t0",
    "fbnetc_100", "gernet_s", "halonet26t", "hardcorenas_a", "hgnet_tiny", "hgnetv2_b0",
    "lcnet_050", "mambaout_femto", "mixer_s16_224", "mnasnet_050", "mobilenetv2_050",
    "mobilenetv3_small_050", "mobilenetv4_conv_small", "poolformer_s12",
    "regnetx_002", "regnety_002", "repvgg_a0",
    "resmlp_12_224", "resnest14d", "resnet18", "resnet50", "resnetv2_50", "resnext26ts",
    "seresnext26d_32x4d", "skresnet18", "starnet_s050",
    "swin_tiny_patch4_window7_224", "swinv2_cr_tiny_224", "tf_efficientnet_lite0",
    "tinynet_e", "tnt_s_patch16_224", "tresnet_m", "visformer_tiny", "vit_small_patch16_224",
    "vit_tiny_patch16_224", "wide_resnet50_2",
}

#: transformers architectures also checked through the dynamo ONNX exporter in
#: make test: one of each kind of model
_TIER_DYNAMO = {
    "BertModel", "DistilBertModel", "DebertaV2Model", "GPT2LMHeadModel", "LlamaForCausalLM",
    "Qwen2ForCausalLM", "BartModel", "WhisperModel", "ViTModel", "CLIPModel",
}


#: text models the tier also runs with the batch and the sequence dynamic
_TIER_DYNAMIC_SEQ = {"LlamaForCausalLM", "GPT2LMHeadModel"}   # BERT: test_dynamic_dims
#: ... and through the dynamo ONNX exporter with symbolic dimensions
_TIER_ONNX_DYNAMIC_SEQ = {"LlamaForCausalLM"}


def test_tier():
    """The (model, frontend) pairs of make test's zoo tier: every transformers
    architecture through from_torch, one of each kind through the dynamo
    exporter and a few text models with a dynamic sequence, and 50 timm
    architectures through from_torch (the tier stays under ten minutes on two
    cores; `python -m dlc.zoo` runs every pair)."""
    pairs = []
    for model in all_models():
        if model.library == "transformers":
            pairs.append((model, "torch"))
            if model.name in _TIER_DYNAMO:
                pairs.append((model, "onnx-dynamo"))
            if model.name in _TIER_DYNAMIC_SEQ:
                pairs.append((model, "torch-dynamic-seq"))
            if model.name in _TIER_ONNX_DYNAMIC_SEQ:
                pairs.append((model, "onnx-dynamic-seq"))
        elif model.name in _TIER_TIMM:
            pairs.append((model, "torch"))
    return pairs
