"""keras-hub transformers, built from configs, planned with their own maps.

Gemma, Llama and Qwen2 backbones from small configs (nothing downloaded),
with `get_layout_map()` on a mesh where it fails (one key/value head split
over a larger axis) and one where it works; the grouped problems, and each
suggested fix applied.
"""

import math

import keras
import pytest

keras_hub = pytest.importorskip("keras_hub")

from kerasmesh.plan import planner as plan  # noqa: E402

FAMILIES = {
    "gemma": ("GemmaBackbone", {"head_dim": 8},
              "decoder_block_{0..2}/attention/{key,value}/kernel", 1),
    "llama": ("LlamaBackbone", {},
              "transformer_layer_{0..2}/self_attention/{key,value}/kernel", 2),
    "qwen2": ("Qwen2Backbone", {},
              "transformer_layer_{0..2}/self_attention/{key,value}/kernel", 2),
}


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), keras.distribution.list_devices())


def builder(family, kv_heads):
    cls_name, extra, _, _ = FAMILIES[family]
    cls = getattr(keras_hub.models, cls_name)
    config = dict(vocabulary_size=256, num_layers=3, num_query_heads=8,
                  num_key_value_heads=kv_heads, hidden_dim=32,
                  intermediate_dim=64, **extra)
    return cls, (lambda: cls(**config))


def apply_fix(layout_map, fix):
    new = keras.distribution.LayoutMap(layout_map.device_mesh)
    for key in layout_map:
        if key not in fix["remove"]:
            new[key] = tuple(layout_map[key].axes)
    for key, axes in fix["add"]:
        new[key] = tuple(axes)
    return new


def errors(p):
    return [g for g in p["groups"] if g["severity"] == "error"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_own_layout_map_fails_on_one_kv_head_grouped_with_a_fix(mesh, family):
    cls, build = builder(family, kv_heads=1)
    layout_map = cls.get_layout_map(mesh)
    p = plan.plan_layout(build, layout_map)
    groups = errors(p)
    assert len(groups) == 1
    g = groups[0]
    _, _, listing, dimension = FAMILIES[family]
    assert g["kind"] == "layout_divisibility"
    assert g["count"] == 6
    assert g["listing"] == [listing]
    assert (g["dimension"], g["size"]) == (dimension, 1)
    assert g["axis_size"] == {"model": 4, "batch": 2}[g["axis"]]
    assert "6 variables" in g["message"]
    # One flat problem per variable, as before.
    assert sum(q["kind"] == "layout_divisibility"
               for q in p["problems"]) == 6
    fix = g["fix"]
    assert fix is not None and fix["remove"] == [g["rule"]]
    fixed = plan.plan_layout(build, apply_fix(layout_map, fix))
    assert errors(fixed) == []
    # The query kernels keep their layout; key and value kernels get one
    # that divides.
    cols = fixed["variables"]
    for path, axes, rule in zip(cols["path"], cols["axes"], cols["rule"]):
        if path.endswith("query/kernel"):
            assert axes == list(layout_map[g["rule"]].axes)
        if path.endswith(("key/kernel", "value/kernel")):
            assert rule is not None


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_own_layout_map_works_when_heads_divide(mesh, family):
    cls, build = builder(family, kv_heads=4)
    p = plan.plan_layout(build, cls.get_layout_map(mesh))
    assert errors(p) == []
    assert p["summary"]["device_weights"] < p["summary"]["bytes"]


def test_untied_reverse_embeddings_warn_as_replicated_with_a_rule(mesh):
    cls, build = builder("llama", kv_heads=4)
    layout_map = cls.get_layout_map(mesh)
    p = plan.plan_layout(build, layout_map)
    [g] = [g for g in p["groups"] if g["kind"] == "replicated"]
    assert g["paths"] == ["token_embedding/reverse_embeddings"]
    assert g["severity"] == "warning"
    assert "replicated" in g["message"]
    fixed = plan.plan_layout(build, apply_fix(layout_map, g["fix"]))
    assert not [g for g in fixed["groups"] if g["kind"] == "replicated"]
    assert fixed["summary"]["device_weights"] < \
        p["summary"]["device_weights"]
    # The share is a setting.
    quiet = plan.plan_layout(build, layout_map, replicated_share=0.99)
    assert not [g for g in quiet["groups"] if g["kind"] == "replicated"]


def test_model_parallel_from_a_hub_map_is_a_layout_source(mesh):
    cls, build = builder("gemma", kv_heads=4)
    dist = keras.distribution.ModelParallel(
        layout_map=cls.get_layout_map(mesh), batch_dim_name="batch")
    p = plan.plan_layout(build, dist)
    assert p["summary"]["batch_dim_name"] == "batch"
    assert errors(p) == []


def test_llama3_70b_plans_from_its_config_without_weights(mesh):
    build = lambda: keras_hub.models.Llama3Backbone(  # noqa: E731
        vocabulary_size=128256, num_layers=80, num_query_heads=64,
        hidden_dim=8192, intermediate_dim=28672, num_key_value_heads=8,
        dtype="bfloat16")
    p = plan.plan_layout(build, keras_hub.models.Llama3Backbone
                         .get_layout_map(mesh))
    s = p["summary"]
    assert s["variables"] == 723
    assert math.isclose(s["parameters"], 70.55e9, rel_tol=1e-3)
    assert errors(p) == []
    [g] = [g for g in p["groups"] if g["kind"] == "replicated"]
    assert g["paths"] == ["token_embedding/reverse_embeddings"]


def causal_lm_with_lora():
    backbone = keras_hub.models.GemmaBackbone(
        vocabulary_size=256, num_layers=2, num_query_heads=4,
        num_key_value_heads=4, hidden_dim=32, intermediate_dim=64,
        head_dim=8)
    task = keras_hub.models.GemmaCausalLM(backbone=backbone,
                                          preprocessor=None)
    task.backbone.enable_lora(rank=4)
    return task


def test_a_task_that_compiles_itself_plans_shape_only(mesh):
    # GemmaCausalLM() compiles itself with an Adam its compile() makes:
    # that optimizer is made outside the shape-only scope.
    layout_map = keras_hub.models.GemmaBackbone.get_layout_map(mesh)
    p = plan.plan_layout(causal_lm_with_lora, layout_map)
    s = p["summary"]
    assert s["optimizer"] == "Adam"
    trainable = [path for path, t in zip(p["variables"]["path"],
                                         p["variables"]["trainable"]) if t]
    assert len(trainable) == 8
    assert all("lora_kernel" in path for path in trainable)
    # No "replicated" warning for the LoRA factors.
    assert [q for q in p["problems"] if q["kind"] == "replicated"] == []
