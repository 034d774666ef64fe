"""torch.distributed for ocl tensors: "oclgloo", a host-staged process group.

Importing this module registers the backend. Use it as

    import torch_ocl.distributed  # noqa: F401
    dist.init_process_group("cpu:gloo,ocl:oclgloo", rank=rank, world_size=world)

Each collective copies its ocl tensors to the host, runs the same collective with an inner
gloo process group, and copies the results back; CPU tensors go to gloo directly. This is
correct on any OpenCL platform but pays two host copies per call: it is meant for
correctness (DDP, tests, small clusters), not for fast multi-GPU training. Every call is
completed before it returns, so the returned Work is already done.

torch replaces the whole default group by a Python ProcessGroup subclass registered for
any device, so "cpu:gloo,ocl:oclgloo" routes CPU collectives through this class too; it
hands them to its gloo group unchanged.
"""
import datetime

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

BACKEND_NAME = "oclgloo"

__all__ = ["BACKEND_NAME", "ProcessGroupOclGloo"]


def _done(result):
    fut = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


def _stage(tensors):
    """Host copies of the ocl tensors (the CPU tensors themselves otherwise)."""
    return [t.cpu() if t.device.type == "ocl" else t for t in tensors]


def _unstage(tensors, staged):
    for t, s in zip(tensors, staged):
        if t is not s:
            t.copy_(s)


class ProcessGroupOclGloo(dist.ProcessGroup):
    """A ProcessGroup that stages ocl tensors through the host around a gloo group."""

    def __init__(self, store, rank, world_size, timeout=datetime.timedelta(minutes=30)):
        super().__init__(rank, world_size)
        self._gloo = dist.ProcessGroupGloo(store, rank, world_size, timeout)

    def getBackendName(self):
        return BACKEND_NAME

    def allreduce(self, tensors, opts=None):
        opts = opts if opts is not None else dist.AllreduceOptions()
        staged = _stage(tensors)
        self._gloo.allreduce(staged, opts).wait()
        _unstage(tensors, staged)
        return _done(tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        opts = opts if opts is not None else dist.AllreduceCoalescedOptions()
        staged = _stage(tensors)
        self._gloo.allreduce_coalesced(staged, opts).wait()
        _unstage(tensors, staged)
        return _done(tensors)

    def broadcast(self, tensors, opts=None):
        opts = opts if opts is not None else dist.BroadcastOptions()
        staged = _stage(tensors)
        self._gloo.broadcast(staged, opts).wait()
        _unstage(tensors, staged)
        return _done(tensors)

    def reduce(self, tensors, opts=None):
        opts = opts if opts is not None else dist.ReduceOptions()
        staged = _stage(tensors)
        self._gloo.reduce(staged, opts).wait()
        _unstage(tensors, staged)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else dist.AllgatherOptions()
        staged_out = [_stage(outs) for outs in output_tensors]
        self._gloo.allgather(staged_out, _stage(input_tensors), opts).wait()
        for outs, staged in zip(output_tensors, staged_out):
            _unstage(outs, staged)
        return _done(output_tensors)

    def all_gather_single(self, output, input, opts=None):
        opts = opts if opts is not None else dist.AllgatherOptions()
        (staged_out,), (staged_in,) = _stage([output]), _stage([input])
        self._gloo._allgather_base(staged_out, staged_in, opts).wait()
        _unstage([output], [staged_out])
        return _done(output)

    _allgather_base = all_gather_single

    def gather(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else dist.GatherOptions()
        staged_out = [_stage(outs) for outs in output_tensors]
        self._gloo.gather(staged_out, _stage(input_tensors), opts).wait()
        for outs, staged in zip(output_tensors, staged_out):
            _unstage(outs, staged)
        return _done(output_tensors)

    def scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else dist.ScatterOptions()
        staged_out = _stage(output_tensors)
        self._gloo.scatter(staged_out, [_stage(ins) for ins in input_tensors], opts).wait()
        _unstage(output_tensors, staged_out)
        return _done(output_tensors)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else dist.ReduceScatterOptions()
        staged_out = _stage(output_tensors)
        self._gloo.reduce_scatter(staged_out, [_stage(ins) for ins in input_tensors], opts).wait()
        _unstage(output_tensors, staged_out)
        return _done(output_tensors)

    def reduce_scatter_single(self, output, input, opts=None):
        opts = opts if opts is not None else dist.ReduceScatterOptions()
        (staged_out,), (staged_in,) = _stage([output]), _stage([input])
        self._gloo._reduce_scatter_base(staged_out, staged_in, opts).wait()
        _unstage([output], [staged_out])
        return _done(output)

    _reduce_scatter_base = reduce_scatter_single

    def send(self, tensors, dst, tag=0):
        self._gloo.send(_stage(tensors), dst, tag).wait()
        return _done(tensors)

    def recv(self, tensors, src, tag=0):
        staged = _stage(tensors)
        self._gloo.recv(staged, src, tag).wait()
        _unstage(tensors, staged)
        return _done(tensors)

    def barrier(self, opts=None):
        opts = opts if opts is not None else dist.BarrierOptions()
        # Queued device work belongs before the barrier, as on CUDA with NCCL.
        if torch.ocl.is_available() and torch.ocl.is_initialized():
            torch.ocl.synchronize()
        self._gloo.barrier(opts).wait()
        return _done(None)


def _create(store, rank, world_size, timeout):
    return ProcessGroupOclGloo(store, rank, world_size, timeout)


if BACKEND_NAME.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND_NAME, _create, devices=["ocl"])
