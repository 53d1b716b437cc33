"""The expert-parallel bookkeeping (ggemm.expert_parallel) on a CPU, with
NumPy arrays: each function against a brute-force count, and a whole
all-to-all dispatch of W simulated ranks (route, send, receive, run the
experts in segment order, send back, combine) against the layer computed
on one rank. The functions are the same on torch tensors; the GPU check of
examples/moe_layer.py runs the replicated-token form on the device."""
from __future__ import annotations

import doctest

import pytest

import ggemm
from ggemm import expert_parallel as ep

numpy = pytest.importorskip("numpy")


def test_docstring_examples() -> None:
    result = doctest.testmod(ep)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("experts, ranks", [(8, 2), (10, 3), (7, 7), (1, 1),
                                            (256, 8), (5, 4)])
def test_expert_ranges_partition_the_experts(experts: int, ranks: int) -> None:
    ranges = ep.expert_ranges(experts, ranks)
    assert len(ranges) == ranks
    held = [e for first, end in ranges for e in range(first, end)]
    assert held == list(range(experts))
    sizes = [end - first for first, end in ranges]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize("experts, ranks", [(2, 3), (0, 1), (4, 0)])
def test_expert_ranges_refuses_ranks_without_experts(experts: int,
                                                     ranks: int) -> None:
    with pytest.raises(ggemm.ArgumentError):
        ep.expert_ranges(experts, ranks)


@pytest.mark.parametrize("ranges", [[(1, 4)], [(0, 2), (3, 4)],
                                    [(0, 2), (2, 2), (2, 4)]])
def test_ranges_must_be_contiguous_from_zero(ranges: list) -> None:
    with pytest.raises(ggemm.ArgumentError, match="ranges"):
        ep.rank_of_expert(numpy.array([0, 1]), ranges)


def test_rank_of_expert_matches_the_ranges() -> None:
    ranges = ep.expert_ranges(11, 3)
    ids = numpy.arange(-3, 15).reshape(3, 6)
    ranks = ep.rank_of_expert(ids, ranges)
    assert ranks.shape == ids.shape
    for expert, rank in zip(ids.reshape(-1).tolist(),
                            ranks.reshape(-1).tolist()):
        want = [r for r, (first, end) in enumerate(ranges)
                if first <= expert < end]
        assert rank == (want[0] if want else -1), expert


@pytest.mark.parametrize("tokens, topk, experts, ranks", [
    (0, 2, 4, 2), (1, 8, 64, 2), (37, 2, 8, 3), (300, 8, 128, 4)])
def test_rank_splits_count_each_ranks_pairs(tokens: int, topk: int,
                                            experts: int, ranks: int) -> None:
    generator = numpy.random.default_rng(tokens + experts)
    # Padding ids (-1) and ids of no expert are sent nowhere.
    ids = generator.integers(-1, experts + 2, size=(tokens, topk))
    routing = ggemm.sort_by_expert(ids.astype(numpy.int32), experts)
    ranges = ep.expert_ranges(experts, ranks)
    splits = ep.rank_splits(routing.seg_indptr, ranges)
    owner = ep.rank_of_expert(ids, ranges)
    assert splits.tolist() == [int((owner == r).sum()) for r in range(ranks)]
    # Rank r's rows are one run of the sorted rows, its segments a slice.
    for rank, (first, end) in enumerate(ranges):
        local = ep.local_seg_indptr(routing.seg_indptr, (first, end))
        assert local.shape == (end - first + 1,)
        assert int(local[-1] - local[0]) == splits[rank]
        rows = routing.pair_indices[local[0]:local[-1]]
        assert sorted(rows.tolist()) == sorted(
            numpy.flatnonzero(owner.reshape(-1) == rank).tolist())


def test_rank_splits_needs_ranges_over_every_expert() -> None:
    with pytest.raises(ggemm.ArgumentError, match="cover 4 experts"):
        ep.rank_splits(numpy.zeros(9, dtype=numpy.int32),
                       ep.expert_ranges(4, 2))


@pytest.mark.parametrize("expert_range", [(0, 0), (3, 2), (-1, 2), (2, 9)])
def test_local_seg_indptr_refuses_ranges_outside(expert_range) -> None:
    with pytest.raises(ggemm.ArgumentError, match="expert_range"):
        ep.local_seg_indptr(numpy.zeros(9, dtype=numpy.int32), expert_range)


def test_receive_routing_orders_rows_by_expert_then_sender() -> None:
    counts = numpy.array([[2, 0, 1], [0, 0, 3], [1, 2, 0]])
    received = ep.receive_routing(counts, int(counts.sum()))
    assert received.seg_indptr.tolist() == [0, 3, 5, 9]
    assert received.seg_indptr.dtype == numpy.int32
    assert received.row_indices.dtype == numpy.int32
    # Arrival: sender 0 (e0, e0, e2), sender 1 (e2, e2, e2), sender 2 (e0,
    # e1, e1); rows 0..8.
    assert received.row_indices.tolist() == [0, 1, 6, 7, 8, 2, 3, 4, 5]
    empty = ep.receive_routing(numpy.zeros((2, 3), dtype=numpy.int64), 0)
    assert empty.seg_indptr.tolist() == [0, 0, 0, 0]
    assert empty.row_indices.shape == (0,)


def expert(rows, expert_id: int):
    """A stand-in for one expert's FFN that depends on the expert: it
    tags the rows with who computed them."""
    return rows * (expert_id + 2) + expert_id


@pytest.mark.parametrize("ranks, experts, topk, tokens", [
    (2, 8, 2, [5, 0]), (2, 64, 8, [1, 16]), (3, 10, 4, [40, 7, 19]),
    (4, 128, 8, [300, 200, 1, 64])])
def test_all_to_all_dispatch_gives_the_single_rank_layer(
        ranks: int, experts: int, topk: int, tokens: list) -> None:
    """W ranks each route their own tokens, send each rank its rows in
    sorted order (rank_splits), exchange the per-expert counts, order the
    received rows with receive_routing, run their experts segment by
    segment on the gathered rows, write the results back in arrival order
    and return them; each token's weighted sum over its top-k then equals
    the layer computed on one rank."""
    generator = numpy.random.default_rng(sum(tokens) + ranks)
    ranges = ep.expert_ranges(experts, ranks)
    hidden = 3
    x = [generator.standard_normal((t, hidden)) for t in tokens]
    ids = [generator.integers(0, experts, size=(t, topk)) for t in tokens]
    ids[0][::4, -1] = -1  # padding pairs: computed by no rank
    weights = [generator.random((t, topk)) for t in tokens]
    routes = [ggemm.sort_by_expert(i.astype(numpy.int32), experts)
              for i in ids]

    # Send: rank s's sorted rows inside the segments, split by rank.
    sends, counts = [], []
    for s in range(ranks):
        seg = routes[s].seg_indptr
        rows = x[s][routes[s].row_indices[seg[0]:seg[-1]]]
        splits = ep.rank_splits(seg, ranges)
        sends.append(numpy.split(rows, numpy.cumsum(splits)[:-1]))
        counts.append(seg[1:] - seg[:-1])
        assert sum(splits.tolist()) == rows.shape[0]

    results_back = [[None] * ranks for _ in range(ranks)]
    for d, (first, end) in enumerate(ranges):
        recv_counts = numpy.stack([counts[s][first:end]
                                   for s in range(ranks)])
        send_splits = ep.rank_splits(routes[d].seg_indptr, ranges)
        out_sizes, in_sizes = ep.host_split_sizes(send_splits, recv_counts)
        assert out_sizes == send_splits.tolist()
        assert in_sizes == [sends[s][d].shape[0] for s in range(ranks)]
        arrival = numpy.concatenate([sends[s][d] for s in range(ranks)])
        received = ep.receive_routing(recv_counts, sum(in_sizes))
        seg, gather = received.seg_indptr, received.row_indices
        assert sorted(gather.tolist()) == list(range(arrival.shape[0]))
        out = numpy.full_like(arrival, numpy.nan)
        for local in range(end - first):
            rows = gather[seg[local]:seg[local + 1]]
            out[rows] = expert(arrival[rows], first + local)  # scatter back
        assert not numpy.isnan(out).any()
        back = numpy.split(out, numpy.cumsum(in_sizes)[:-1])
        for s in range(ranks):
            results_back[s][d] = back[s]

    for s in range(ranks):
        seg = routes[s].seg_indptr
        sorted_out = numpy.concatenate(results_back[s])
        slots = numpy.zeros((tokens[s] * topk, hidden))
        slots[routes[s].pair_indices[seg[0]:seg[-1]]] = sorted_out
        got = (slots.reshape(tokens[s], topk, hidden)
               * weights[s][..., None]).sum(1)
        want = numpy.zeros((tokens[s], hidden))
        for t in range(tokens[s]):
            for j in range(topk):
                if 0 <= ids[s][t, j] < experts:
                    want[t] += weights[s][t, j] * expert(x[s][t],
                                                         ids[s][t, j])
        numpy.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_torch_tensors_give_the_numpy_results() -> None:
    torch = pytest.importorskip("torch")
    counts = numpy.array([[2, 0, 1], [0, 4, 3]])
    want = ep.receive_routing(counts, 10)
    got = ep.receive_routing(torch.from_numpy(counts), 10)
    assert got.seg_indptr.dtype == torch.int32
    assert got.seg_indptr.tolist() == want.seg_indptr.tolist()
    assert got.row_indices.tolist() == want.row_indices.tolist()
    seg = numpy.array([0, 2, 2, 5, 6, 6, 9])
    ranges = ep.expert_ranges(6, 4)
    assert ep.rank_splits(torch.from_numpy(seg), ranges).tolist() == \
        ep.rank_splits(seg, ranges).tolist()
    assert ep.host_split_sizes(torch.tensor([3, 1]), torch.from_numpy(
        counts)) == ep.host_split_sizes(numpy.array([3, 1]), counts)
    ids = numpy.array([[0, 5], [3, -1]])
    assert ep.rank_of_expert(torch.from_numpy(ids), ranges).tolist() == \
        ep.rank_of_expert(ids, ranges).tolist()


class ThreadedAllToAll:
    """``torch.distributed.all_to_all_single`` for W ranks running as
    threads of one process: each rank leaves its chunks, all meet at a
    barrier, each takes the chunks addressed to it, in rank order."""

    def __init__(self, ranks: int) -> None:
        import threading
        self.ranks = ranks
        self.barrier = threading.Barrier(ranks, timeout=30)
        self.boxes: dict = {}
        self.calls = [0] * ranks

    def for_rank(self, rank: int):
        def exchange(send, send_splits, recv_splits):
            assert len(send_splits) == len(recv_splits) == self.ranks
            assert sum(send_splits) == send.shape[0]
            call = self.calls[rank]
            self.calls[rank] += 1
            chunks = numpy.split(send, numpy.cumsum(send_splits)[:-1])
            for dest, chunk in enumerate(chunks):
                self.boxes[(call, rank, dest)] = chunk
            self.barrier.wait()
            got = [self.boxes[(call, src, rank)] for src in range(self.ranks)]
            assert [c.shape[0] for c in got] == list(recv_splits)
            self.barrier.wait()  # everyone has taken theirs
            return numpy.concatenate(got)
        return exchange


@pytest.mark.parametrize("ranks, experts, topk, tokens", [
    (2, 8, 2, [5, 0]), (2, 64, 8, [1, 16]), (3, 10, 4, [40, 7, 19]),
    (4, 128, 8, [300, 200, 1, 64]), (2, 8, 2, [0, 0])])
def test_dispatch_plan_on_threaded_ranks(ranks: int, experts: int, topk: int,
                                         tokens: list) -> None:
    """examples/moe_layer.py's ExpertParallelMoE step by step, with NumPy
    arrays and the collectives between threads: each rank routes its own
    tokens, ``dispatch_plan`` exchanges the counts through the collective
    and reads the split sizes, the rows (and their routing weights) go out
    through the same collective, each rank runs its experts on the
    received rows in ``received``'s segment order, scatters them back to
    arrival order and returns them; the combine then gives the layer
    computed on one rank, and every rank made the same collective calls."""
    import threading
    generator = numpy.random.default_rng(sum(tokens) + 7 * ranks)
    ranges = ep.expert_ranges(experts, ranks)
    hidden = 3
    x = [generator.standard_normal((t, hidden)) for t in tokens]
    ids = [generator.integers(0, experts, size=(t, topk)) for t in tokens]
    if tokens[0] >= 4:
        ids[0][::4, 0] = -1            # padding: sent nowhere
        ids[0][1::4, -1] = experts     # an id of no expert: sent nowhere
    weights = [generator.random((t, topk)) for t in tokens]
    comm = ThreadedAllToAll(ranks)
    outputs, errors = [None] * ranks, []

    def run(rank: int) -> None:
        try:
            exchange = comm.for_rank(rank)
            routing = ggemm.sort_by_expert(ids[rank].astype(numpy.int32),
                                           experts)
            plan = ep.dispatch_plan(routing.seg_indptr, ranges, rank,
                                    exchange)
            sent = slice(plan.first_row,
                         plan.first_row + sum(plan.send_splits))
            pairs = routing.pair_indices[sent]
            recv_x = exchange(x[rank][routing.row_indices[sent]],
                              plan.send_splits, plan.recv_splits)
            recv_w = exchange(weights[rank].reshape(-1)[pairs],
                              plan.send_splits, plan.recv_splits)
            seg, gather = plan.received.seg_indptr, plan.received.row_indices
            assert seg[-1] == recv_x.shape[0] == sum(plan.recv_splits)
            back = numpy.full_like(recv_x, numpy.nan)
            first = ranges[rank][0]
            for local in range(seg.shape[0] - 1):
                rows = gather[seg[local]:seg[local + 1]]
                back[rows] = (expert(recv_x[rows], first + local)
                              * recv_w[rows, None])
            assert not numpy.isnan(back).any()
            ret = exchange(back, plan.recv_splits, plan.send_splits)
            slots = numpy.zeros((tokens[rank] * topk, hidden))
            slots[pairs] = ret
            outputs[rank] = slots.reshape(tokens[rank], topk, hidden).sum(1)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append((rank, error))
            comm.barrier.abort()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(ranks)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert comm.calls == [4] * ranks
    for rank in range(ranks):
        want = numpy.zeros((tokens[rank], hidden))
        for t in range(tokens[rank]):
            for j in range(topk):
                if 0 <= ids[rank][t, j] < experts:
                    want[t] += weights[rank][t, j] * expert(
                        x[rank][t], ids[rank][t, j])
        numpy.testing.assert_allclose(outputs[rank], want, rtol=1e-12,
                                      atol=1e-12)


def test_dispatch_plan_checks_its_arguments() -> None:
    seg = numpy.array([0, 1, 3, 3, 4])
    ranges = ep.expert_ranges(4, 2)
    with pytest.raises(ggemm.ArgumentError, match="rank: expected an int "
                       r"in \[0, 2\), got 2"):
        ep.dispatch_plan(seg, ranges, 2, lambda s, a, b: s)
    with pytest.raises(ggemm.ArgumentError, match="exchange: expected 4 "
                       "counts back"):
        ep.dispatch_plan(seg, ranges, 0, lambda s, a, b: s[:3])
