"""Gathers: an embedding lookup and cross-entropy with integer labels, as
torch-mlir writes them (tensor.extract inside a linalg.generic body), train
like PyTorch's nn.Embedding + F.cross_entropy on 1 rank, and N ranks (data
parallel) equal 1 rank. Before, their gradients were silently zero."""

import re

import numpy as np
import pytest
import torch

from conftest import ROOT, epl_run, losses, save_inputs
from epl import safetensors

MODEL = ROOT / "test" / "e2e" / "Inputs" / "gather-classifier.mlir"
STEPS = 12
RTOL = 1e-5


def problem(tmp_path):
    rng = np.random.default_rng(5)
    params = {"emb": rng.standard_normal((20, 6)).astype(np.float32),
              "w": (rng.standard_normal((6, 4)) / 2).astype(np.float32)}
    # Repeated ids within a row and across rows: their gradients add up.
    data = {"ids": rng.integers(0, 20, (8, 5)).astype(np.int64),
            "labels": rng.integers(0, 4, 8).astype(np.int64)}
    data["ids"][0, :3] = 7
    data["ids"][5, 1] = 7
    return (params, data, *save_inputs(tmp_path, params, data))


def torch_losses(params, data):
    emb = torch.nn.Embedding(20, 6)
    head = torch.nn.Linear(6, 4, bias=False)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(params["emb"]))
        head.weight.copy_(torch.from_numpy(params["w"]).T)
    opt = torch.optim.SGD([emb.weight, head.weight], lr=0.5, momentum=0.9)
    ids = torch.from_numpy(data["ids"])
    labels = torch.from_numpy(data["labels"])
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(emb(ids).mean(dim=1)), labels)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def run(tmp_path, *extra, ranks=1, mpi=False, micro_batches=None, text=None):
    model = MODEL
    if text is not None:
        model = tmp_path / "model.mlir"
        model.write_text(text)
    if micro_batches:
        text = model.read_text().replace(
            '"optimizer.type" = "momentum",',
            f'"optimizer.type" = "momentum", "pipeline.num_micro_batch" = {micro_batches},')
        model = tmp_path / "micro.mlir"
        model.write_text(text)
    _, _, p, d = problem(tmp_path)
    out = epl_run(model, "--params", p, "--data", d, "--steps", STEPS, *extra,
                  ranks=ranks, mpi=mpi)
    return losses(out.stdout)


def test_one_rank_equals_pytorch(tmp_path):
    params, data, _, _ = problem(tmp_path)
    expected = torch_losses(params, data)
    got = run(tmp_path)
    assert got[-1] < 0.5 * got[0], "the loss must fall: gradients reach both tables"
    np.testing.assert_allclose(got, expected, rtol=RTOL)


@pytest.mark.parametrize("ranks,mpi", [(2, False), (4, False), (2, True)])
def test_n_ranks_equal_one(tmp_path, ranks, mpi):
    one = run(tmp_path)
    many = run(tmp_path, ranks=ranks, mpi=mpi)
    np.testing.assert_allclose(many, one, rtol=RTOL)


@pytest.mark.parametrize("ranks,micro_batches", [(1, 2), (1, 4), (2, 2)])
def test_micro_batches_equal_the_whole_batch(tmp_path, ranks, micro_batches):
    """The label gather reads each example's row at the example's own
    position: a micro-batch reads its own rows at its own positions, and
    its gradient scatters into them. Accumulated over micro-batches (and
    split over ranks) the steps equal the whole batch's, and PyTorch's.
    Before, micro-batching refused the model."""
    params, data, _, _ = problem(tmp_path)
    got = run(tmp_path, ranks=ranks, micro_batches=micro_batches)
    np.testing.assert_allclose(got, run(tmp_path), rtol=RTOL)
    np.testing.assert_allclose(got, torch_losses(params, data), rtol=RTOL)


def test_a_constraint_on_the_read_tensor_keeps_its_rows(tmp_path):
    """A sharding constraint on the scores the label gather reads is
    replaced by a reshard before the gather is partitioned: the gather
    must read the resharded scores at its local rows. Before, the scores
    were made whole there and each rank read the first rows (1.3474 on
    2 ranks vs 1.3633 on 1)."""
    text = MODEL.read_text().replace(
        "    // nll: the label picks the column.",
        '    %logpc = epl.sharding_constraint %logp <@mesh, [["data"], []]>'
        " : tensor<8x4xf32>\n    // nll: the label picks the column.", 1)
    text = text.replace("tensor.extract %logp[%row", "tensor.extract %logpc[%row")
    text = text.replace("  func.func @model", '  epl.mesh @mesh ["data" = 2]\n  func.func @model', 1)
    model = tmp_path / "constrained.mlir"
    model.write_text(text)
    _, _, p, d = problem(tmp_path)
    got = epl_run(model, "--params", p, "--data", d, "--steps", STEPS, ranks=2)
    np.testing.assert_allclose(losses(got.stdout), run(tmp_path), rtol=RTOL)


@pytest.mark.parametrize("ranks,micro_batches,split_columns",
                         [(1, None, False), (2, None, False), (2, 2, False), (2, None, True)])
def test_a_table_cast_to_dynamic_rows_trains_like_a_static_one(
        tmp_path, ranks, micro_batches, split_columns):
    """The embedding table read through `tensor.cast` to `tensor<?x6xf32>`
    (as a frontend with a symbolic vocabulary writes it): its gradient is
    zeros of the table's runtime size scattered into. Before, epl-autodiff
    emitted a `tensor.empty` without its dynamic size (invalid IR). With
    its columns split by a constraint, it is gathered before the cast (the
    runtime moves static shapes); before, a dynamic all_gather failed."""
    table = "%emb"
    if split_columns:
        table = "%embc"
        text = MODEL.read_text().replace(
            "    // Embedding bag:",
            '    %embc = epl.sharding_constraint %emb <@mesh, [[], ["data"]]> : tensor<20x6xf32>\n'
            "    // Embedding bag:", 1)
        text = text.replace("  func.func @model", '  epl.mesh @mesh ["data" = 2]\n  func.func @model', 1)
    else:
        text = MODEL.read_text()
    text = text.replace(
        "    // Embedding bag:",
        f"    %embd = tensor.cast {table} : tensor<20x6xf32> to tensor<?x6xf32>\n"
        "    // Embedding bag:", 1)
    text = text.replace("tensor.extract %emb[%row, %col] : tensor<20x6xf32>",
                        "tensor.extract %embd[%row, %col] : tensor<?x6xf32>")
    assert "%embd[" in text
    got = run(tmp_path, ranks=ranks, micro_batches=micro_batches, text=text)
    np.testing.assert_allclose(got, run(tmp_path), rtol=RTOL)


@pytest.mark.parametrize("ranks,micro_batches", [(1, None), (2, None), (2, 2)])
def test_a_position_as_written_is_the_position(tmp_path, ranks, micro_batches):
    """The label gather's row written as IR is before canonicalization,
    the loop's position plus 0 through i64 and back: still the example's
    own row, so each rank and micro-batch reads its own rows and nothing is
    gathered (before, the scores and labels were gathered whole: correct,
    slower); PyTorch's losses."""
    text = MODEL.read_text().replace(
        "      %row = linalg.index 0 : index",
        "      %pos = linalg.index 0 : index\n"
        "      %c0 = arith.constant 0 : index\n"
        "      %pos0 = arith.addi %pos, %c0 : index\n"
        "      %pos64 = arith.index_cast %pos0 : index to i64\n"
        "      %row = arith.index_cast %pos64 : i64 to index", 1)
    assert "%pos64" in text
    params, data, _, _ = problem(tmp_path)
    got = run(tmp_path, "--report", tmp_path / "report.json", ranks=ranks,
              micro_batches=micro_batches, text=text)
    np.testing.assert_allclose(got, torch_losses(params, data), rtol=RTOL)
    if ranks > 1:
        import json
        report = json.loads((tmp_path / "report.json").read_text())
        kinds = {c["kind"] for c in report["collectives"]}
        assert kinds == {"all_reduce"}, kinds


def test_minimal_gather_moves(tmp_path):
    """loss = sum_k w[i[k]], w = [1, 2, 3, 4], i = [1, 3]: 6, then 5.98
    after one SGD step at lr 0.01 (each gathered element's gradient is 1)."""
    model = tmp_path / "gather.mlir"
    model.write_text(re.sub(r"\s+", " ", """
    module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-02 : f64}} {
      func.func @model(%i: tensor<2xi64> {epl.arg = "input", epl.name = "i"},
                       %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
        %zero = arith.constant 0.0 : f32
        %e = tensor.empty() : tensor<f32>
        %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
        %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                             iterator_types = ["reduction"]}
            ins(%i : tensor<2xi64>) outs(%f : tensor<f32>) {
        ^bb0(%a: i64, %acc: f32):
          %idx = arith.index_cast %a : i64 to index
          %v = tensor.extract %w[%idx] : tensor<4xf32>
          %s = arith.addf %acc, %v : f32
          linalg.yield %s : f32
        } -> tensor<f32>
        return %r : tensor<f32>
      }
    }"""))
    p, d = save_inputs(tmp_path, {"w": np.array([1, 2, 3, 4], np.float32)},
                       {"i": np.array([1, 3], np.int64)})
    out = epl_run(model, "--params", p, "--data", d, "--steps", 3,
                  "--save", tmp_path / "w.safetensors")
    np.testing.assert_allclose(losses(out.stdout), [6.0, 5.98, 5.96], rtol=1e-6)
    w = safetensors.load(tmp_path / "w.safetensors")["w"]
    np.testing.assert_allclose(w, [1, 1.97, 3, 3.97], rtol=1e-6)


@pytest.mark.parametrize("ranks,extra", [(1, ()), (2, ()), (1, ("--emulate-gpu",))])
def test_an_index_out_of_range_is_one_error_line(tmp_path, ranks, extra):
    """Labels counted from 1 (4 classes: 1..4) would read the next row's
    log-probability; the gather's index check ends the run naming it (in
    the emulated GPU kernels, a call of the runtime's check)."""
    _, data, p, _ = problem(tmp_path)
    data = dict(data, labels=data["labels"] + 1)
    data["labels"][0] = 4
    bad = tmp_path / "bad.safetensors"
    safetensors.save(bad, data)
    out = epl_run(MODEL, "--params", p, "--data", bad, "--steps", 2, *extra,
                  ranks=ranks, expect_ok=False)
    assert out.returncode == 1, out.stderr
    assert re.search(r"the model's assertion failed in step 1: \"an index of a gather \(tensor.extract "
                     r"at .*gather-classifier.mlir:\d+:\d+\) is out of range", out.stderr), out.stderr



@pytest.mark.parametrize("ranks,dynamic", [(1, False), (2, False), (1, True)])
def test_gpu_kernels_scatter_each_row_on_its_own_thread(tmp_path, ranks, dynamic):
    """On the GPU target both gradients scatter one row per thread
    (epl-parallelize-scatters: the embedding table's columns, the scores'
    examples), each row's updates added in the CPU's order: the emulated
    kernels train to the CPU's parameters bit for bit, with the table's
    rows static or dynamic."""
    text = MODEL.read_text()
    if dynamic:
        text = text.replace(
            "    // Embedding bag:",
            "    %embd = tensor.cast %emb : tensor<20x6xf32> to tensor<?x6xf32>\n"
            "    // Embedding bag:", 1)
        text = text.replace("tensor.extract %emb[%row, %col] : tensor<20x6xf32>",
                            "tensor.extract %embd[%row, %col] : tensor<?x6xf32>")
    saved = {}
    for tag, extra in (("cpu", ()), ("gpu", ("--emulate-gpu",))):
        save = tmp_path / f"{tag}.safetensors"
        run(tmp_path, "--save", save, *extra, ranks=ranks, text=text)
        saved[tag] = safetensors.load(save)
    assert saved["gpu"].keys() == saved["cpu"].keys()
    for name, value in saved["cpu"].items():
        np.testing.assert_array_equal(saved["gpu"][name], value, err_msg=name)
