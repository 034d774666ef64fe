"""torch.distributed on ocl tensors through the host-staged "oclgloo" process group
(torch_ocl/distributed.py): two processes on 127.0.0.1 run collectives and one DDP step."""
import json
import os
import socket
import subprocess
import sys
import textwrap

from .conftest import requires_ocl
from .test_autoload import ROOT

pytestmark = requires_ocl

WORKER = textwrap.dedent("""
    import json, os, sys, warnings
    import torch, torch.distributed as dist
    import torch_ocl.distributed  # registers "oclgloo"

    warnings.simplefilter("ignore")  # CPU-fallback notices are not what this test checks
    rank, world = int(sys.argv[1]), int(sys.argv[2])
    dist.init_process_group("cpu:gloo,ocl:oclgloo", init_method="tcp://127.0.0.1:" + sys.argv[3],
                            rank=rank, world_size=world)
    res = {}

    x = torch.empty(2, 3, device="ocl").fill_(rank + 1)
    dist.all_reduce(x)
    res["all_reduce"] = [x.device.type, x.cpu().tolist()]
    i = torch.full((4,), 10 * rank, dtype=torch.int64, device="ocl")
    dist.all_reduce(i, op=dist.ReduceOp.MAX)
    res["all_reduce_max"] = i.cpu().tolist()

    b = torch.full((3,), float(rank), device="ocl") if rank else torch.tensor([7.0, 8.0, 9.0]).to("ocl")
    dist.broadcast(b, src=0)
    res["broadcast"] = b.cpu().tolist()

    outs = [torch.zeros(2, dtype=torch.int32, device="ocl") for _ in range(world)]
    dist.all_gather(outs, torch.full((2,), rank + 5, dtype=torch.int32, device="ocl"))
    res["all_gather"] = [o.cpu().tolist() for o in outs]
    flat = torch.zeros(2 * world, device="ocl")
    dist.all_gather_into_tensor(flat, torch.full((2,), float(rank), device="ocl"))
    res["all_gather_into_tensor"] = flat.cpu().tolist()
    rs = torch.zeros(2, device="ocl")
    dist.reduce_scatter_tensor(rs, torch.tensor([1.0, 2.0, 3.0, 4.0]).to("ocl"))
    res["reduce_scatter_tensor"] = rs.cpu().tolist()
    c = torch.full((2,), float(rank))
    dist.all_reduce(c)                                   # CPU tensors keep working
    res["cpu_all_reduce"] = c.tolist()
    dist.barrier()
    res["barrier"] = True

    # DDP: each rank sees different data; gradients must be the average, on every rank.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    ref = [p.detach().clone() for p in model.parameters()]
    ddp = torch.nn.parallel.DistributedDataParallel(model.to("ocl"))
    g = torch.Generator().manual_seed(100 + rank)
    inp, tgt = torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)
    loss = torch.nn.functional.mse_loss(ddp(inp.to("ocl")), tgt.to("ocl"))
    loss.backward()
    grads = [p.grad.detach().cpu() for p in model.parameters()]
    res["ddp_grads"] = [gr.flatten().tolist() for gr in grads]

    # The same step on the CPU with both ranks' data, averaged, as the reference.
    expect = None
    for r in range(world):
        m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
        with torch.no_grad():
            for p, q in zip(m.parameters(), ref):
                p.copy_(q)
        gr = torch.Generator().manual_seed(100 + r)
        a, t = torch.randn(5, 4, generator=gr), torch.randn(5, 2, generator=gr)
        torch.nn.functional.mse_loss(m(a), t).backward()
        gs = [p.grad / world for p in m.parameters()]
        expect = gs if expect is None else [e + s for e, s in zip(expect, gs)]
    res["ddp_matches_cpu"] = all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in zip(grads, expect))
    dist.destroy_process_group()
    print("RESULT " + json.dumps(res))
""")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_collectives_and_ddp_two_processes():
    world, port = 2, str(_free_port())
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(r), str(world), port], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(world)]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{out}\nstderr:\n{err}"
            results.append(json.loads([ln for ln in out.splitlines() if ln.startswith("RESULT ")][0][7:]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for rank, res in enumerate(results):
        assert res["all_reduce"] == ["ocl", [[3.0] * 3] * 2], res
        assert res["all_reduce_max"] == [10] * 4
        assert res["broadcast"] == [7.0, 8.0, 9.0]
        assert res["all_gather"] == [[5, 5], [6, 6]]
        assert res["all_gather_into_tensor"] == [0.0, 0.0, 1.0, 1.0]
        assert res["reduce_scatter_tensor"] == [[2.0, 4.0], [6.0, 8.0]][rank]
        assert res["cpu_all_reduce"] == [1.0, 1.0]
        assert res["barrier"] is True
        assert res["ddp_matches_cpu"], f"rank {rank}: DDP gradients differ from the CPU reference"
    assert results[0]["ddp_grads"] == results[1]["ddp_grads"], "DDP gradients differ between ranks"
