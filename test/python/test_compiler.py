"""The Python compiler bindings (ctypes over libGGemmCAPI.so), on a CPU."""
import json
from pathlib import Path

import pytest

import ggemm
from ggemm.compiler import CompilerError, load_compiler

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def compiler_library():
    try:
        load_compiler()
    except CompilerError as error:
        pytest.skip(f"compiler library not built: {error}")


def test_compile_example_to_bundle(tmp_path: Path) -> None:
    source = (ROOT / "examples" / "segment_matmul_bf16.mlir").read_text()
    manifests = ggemm.compile_bundles(source, tmp_path / "out",
                                      cache_dir=tmp_path / "cache")
    assert list(manifests) == ["moe_up_kernel"]
    manifest = json.loads(manifests["moe_up_kernel"].read_text())
    # Dynamic rows: one bundle with a kernel per tile variant (the
    # pipeline's default), picked per launch by the rows per group.
    assert manifest["version"] == 2
    assert manifest["arch"] == "sm_90a"
    assert manifest["dispatch"] == {"rule": "rows_per_group",
                                    "bounds": [16, 32, 64]}
    assert [v["entry"] for v in manifest["variants"]] == [
        f"moe_up_v{i}_kernel" for i in range(4)]
    # Swap-AB token tiles up to 64 rows per group, then 128x256.
    assert [(v["tile"]["block_m"], v["tile"]["swap_ab"])
            for v in manifest["variants"]] == [
        (24, True), (48, True), (88, True), (128, False)]
    for variant in manifest["variants"]:
        text = (tmp_path / "out" / variant["ptx"]).read_text()
        assert "wgmma.mma_async" in text
        assert "cp.async.bulk.tensor" in text
    ptx = (tmp_path / "out" / "moe_up_v1_kernel.ptx").read_text()
    # A second compile of the same IR comes from the cache.
    cached = next((tmp_path / "cache").iterdir())
    stamp = (cached / "COMPLETE").stat().st_mtime_ns
    ggemm.compile_bundles(source, tmp_path / "again",
                          cache_dir=tmp_path / "cache")
    assert (cached / "COMPLETE").stat().st_mtime_ns == stamp
    assert (tmp_path / "again" / "moe_up_v1_kernel.ptx").read_text() == ptx


def test_verifier_errors_come_back_as_exceptions(tmp_path: Path) -> None:
    source = """
    func.func @f(%x: memref<?x100xbf16>, %w: memref<2x64x128xbf16>,
                 %p: memref<3xi32>, %y: memref<?x64xbf16>) {
      ggemm.segment_matmul ins(%x, %w : memref<?x100xbf16>, memref<2x64x128xbf16>)
          segments(%p : memref<3xi32>) outs(%y : memref<?x64xbf16>)
      return
    }"""
    with pytest.raises(CompilerError, match=r"expects w's K \(128\) to match "
                       r"x's K \(100\)"):
        ggemm.compile_bundles(source, tmp_path, cache_dir=tmp_path / "cache")


def test_run_pipeline_tiles() -> None:
    source = (ROOT / "examples" / "segment_matmul_bf16.mlir").read_text()
    tiled = ggemm.run_pipeline(source, "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled
    with pytest.raises(CompilerError, match="invalid pipeline"):
        ggemm.run_pipeline(source, "no-such-pass")


def test_bad_format_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CompilerError, match="binary_format"):
        ggemm.compile_bundles("", tmp_path, binary_format="fatbin")


def test_errors_name_the_source_line_and_column(tmp_path: Path) -> None:
    source = """func.func @f(%x: memref<?x100xbf16>, %w: memref<2x64x128xbf16>,
             %p: memref<3xi32>, %y: memref<?x64xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x100xbf16>, memref<2x64x128xbf16>)
      segments(%p : memref<3xi32>) outs(%y : memref<?x64xbf16>)
  return
}"""
    with pytest.raises(CompilerError) as caught:
        ggemm.compile_bundles(source, tmp_path, cache_dir=tmp_path / "cache",
                              source_name="moe.mlir")
    message = str(caught.value)
    assert message.startswith("moe.mlir:3:3: error: 'ggemm.segment_matmul' op ")
    # The message, not a generic-form dump of the op, is what the user sees.
    assert "see current operation" not in message
    with pytest.raises(CompilerError, match=r"^<string>:3:3: error: "):
        ggemm.run_pipeline(source, "ggemm-select-config")


def test_bad_pipeline_option_lists_the_valid_values() -> None:
    source = (ROOT / "examples" / "segment_matmul_bf16.mlir").read_text()
    with pytest.raises(CompilerError, match=r"expects one of isa, bin; got 'cubin'"):
        ggemm.run_pipeline(source, "ggemm-to-ptx{format=cubin}")
    with pytest.raises(CompilerError, match=r"expects one of persistent, tiles; got 'all'"):
        ggemm.run_pipeline(source, "ggemm-to-ptx{grid=all}")
    # llvm::cl's own parsers report on stderr too; the message carries it.
    with pytest.raises(CompilerError, match=r"num-sms option: 'many' value invalid"):
        ggemm.run_pipeline(source, "ggemm-to-ptx{num-sms=many}")


def test_runtime_reads_the_compiled_variants(tmp_path: Path) -> None:
    """The compiler's version 2 bundle is what the runtime reads: a manifest
    contract test across the two (no GPU: the variant choice needs none)."""
    from ggemm import runtime
    try:
        runtime.load_library()
    except runtime.RuntimeLibraryNotFound as error:
        pytest.skip(str(error))
    source = (ROOT / "examples" / "segment_matmul_bf16.mlir").read_text()
    manifests = ggemm.compile_bundles(source, tmp_path / "out",
                                      cache_dir=tmp_path / "cache")

    class Tensor:
        def __init__(self, address, shape, dtype):
            self.address, self.shape = address, tuple(shape)
            self.dtype = type("D", (), {"__str__": lambda _: dtype})()
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.insert(0, step)
                step *= extent
            self.strides = tuple(strides)

        def data_ptr(self):
            return self.address

        def stride(self):
            return self.strides

    def tensors(rows):
        base = 0x1_0000_0000
        return {"x": Tensor(base, (rows, 7168), "torch.bfloat16"),
                "w": Tensor(base + 0x10000000, (8, 4096, 7168),
                            "torch.bfloat16"),
                "y": Tensor(base + 0x20000000, (rows, 4096), "torch.bfloat16"),
                "seg_indptr": Tensor(base + 0x30000000, (9,), "torch.int32")}

    with runtime.Kernel(manifests["moe_up_kernel"]) as kernel:
        # Bounds 16, 32, 64 rows per group (8 groups), then unbounded.
        assert kernel.num_variants == 4
        assert kernel.select_variant(**tensors(8 * 16)) == 0
        assert kernel.select_variant(**tensors(8 * 16 + 1)) == 1
        assert kernel.select_variant(**tensors(8 * 64)) == 2
        assert kernel.select_variant(**tensors(8 * 64 + 1)) == 3
        assert kernel.select_variant(expected_m=16, **tensors(4096)) == 0


def _bundle_files(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_threaded_compile_matches_single_threaded(tmp_path: Path,
                                                  monkeypatch) -> None:
    """The kernels of a bundle compile in parallel on the compiler's pool;
    the bundle is the same, byte for byte, as a single-threaded compile's."""
    source = (ROOT / "examples" / "segment_matmul_bf16.mlir").read_text()
    monkeypatch.delenv("GGEMM_COMPILER_THREADS", raising=False)
    ggemm.compile_bundles(source, tmp_path / "pool",
                          cache_dir=tmp_path / "cache-pool")
    monkeypatch.setenv("GGEMM_COMPILER_THREADS", "1")
    ggemm.compile_bundles(source, tmp_path / "single",
                          cache_dir=tmp_path / "cache-single")
    pool = _bundle_files(tmp_path / "pool")
    assert len([name for name in pool if name.endswith(".ptx")]) == 4
    assert pool == _bundle_files(tmp_path / "single")


def _compile_in_child(source: str, out: str, cache: str) -> None:
    ggemm.compile_bundles(source, out, cache_dir=cache)


def test_compile_in_a_forked_child(tmp_path: Path, monkeypatch) -> None:
    """A child of fork() inherits the compiler's pool without its threads:
    it must get a pool of its own, not wait forever on the parent's."""
    import multiprocessing
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    source = (ROOT / "examples" / "segment_matmul_bf16.mlir").read_text()
    monkeypatch.delenv("GGEMM_COMPILER_THREADS", raising=False)
    ggemm.compile_bundles(source, tmp_path / "parent",
                          cache_dir=tmp_path / "cache-parent")
    child = multiprocessing.get_context("fork").Process(
        target=_compile_in_child,
        args=(source, str(tmp_path / "child"), str(tmp_path / "cache-child")))
    child.start()
    child.join(timeout=300)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child's compile did not finish")
    assert child.exitcode == 0
    assert _bundle_files(tmp_path / "child") == \
        _bundle_files(tmp_path / "parent")
