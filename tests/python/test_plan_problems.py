"""Plan problems on their own: large replicated variables, and checking a
suggested fix against every other variable's layout."""

from kerasmesh.plan import problems

SIZES = {"data": 2, "model": 4}
RULES = {"dense.*kernel": [None, "model"]}


def columns(rule_of_big=None):
    return {"path": ["dense/kernel", "dense/bias", "big/kernel"],
            "rule": ["dense.*kernel", None, rule_of_big],
            "problem": [None, None, None],
            "shape": [[4, 8], [8], [64, 64]],
            "device_bytes": [32.0, 32.0, 16384.0]}


def test_a_large_unmatched_matrix_is_a_replicated_warning():
    [p] = problems.replicated_problems(columns(), problems.DEFAULT_SHARE, 8)
    assert (p["kind"], p["severity"], p["path"]) == \
        ("replicated", "warning", "big/kernel")
    assert "copied 8 times" in p["bullets"][0][1]
    assert 0.99 < p["facts"]["share"] <= 1


def test_vectors_small_variables_and_one_device_are_not_reported():
    cols = columns()
    # The bias is unmatched too, but a vector: replicated by design.
    assert problems.replicated_problems(cols, 0.999, 8) == []
    assert problems.replicated_problems(cols, problems.DEFAULT_SHARE, 1) == []


def test_lora_factors_are_replicated_by_design_and_not_reported():
    for name in ("lora_kernel_a", "lora_kernel_b", "lora_embeddings_a"):
        cols = columns()
        cols["path"] = ["dense/kernel", "dense/bias", f"big/{name}"]
        assert problems.replicated_problems(cols, problems.DEFAULT_SHARE,
                                            8) == []
    # A name that merely starts with "lora" is a variable like any other.
    cols = columns()
    cols["path"] = ["dense/kernel", "dense/bias", "big/lora_kernel"]
    assert len(problems.replicated_problems(cols, problems.DEFAULT_SHARE,
                                            8)) == 1


def test_without_any_rule_placing_a_variable_nothing_is_replicated_by_mistake():
    cols = dict(columns(), rule=[None, None, None])
    assert problems.replicated_problems(cols, problems.DEFAULT_SHARE, 8) == []


def test_a_fix_that_places_only_its_targets_is_accepted():
    fix = {"remove": [], "add": [("big.*kernel", [None, "model"])]}
    assert problems.check_fix(RULES, fix, columns(), SIZES, {"big/kernel"})


def test_a_fix_that_moves_another_variable_or_repeats_a_key_is_refused():
    # ".*kernel" also matches dense/kernel: the two rules clash.
    broad = {"remove": [], "add": [(".*kernel", [None, "model"])]}
    assert not problems.check_fix(RULES, broad, columns(), SIZES,
                                  {"big/kernel"})
    again = {"remove": [], "add": [("dense.*kernel", [None, "model"])]}
    assert not problems.check_fix(RULES, again, columns(), SIZES,
                                  {"big/kernel"})
