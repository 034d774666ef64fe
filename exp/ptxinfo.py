# Builds the hot kernels once at GPTMini-large shapes so TORCH_OCL_BUILD_LOG prints their ptxas info.
import sys, torch, torch.nn.functional as F
dev = "ocl"
def step(name, fn):
    print(f"=== {name}", file=sys.stderr, flush=True)
    fn(); torch.ocl.synchronize() if hasattr(torch, "ocl") else None
for causal in (False,):
    q, k, v = (torch.randn(8, 8, 512, 64, device=dev, requires_grad=True) for _ in range(3))
    step("sdpa", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal).sum().backward())
x = torch.randn(8192, 8192, device=dev, requires_grad=True); t = torch.randint(0, 8192, (8192,), device=dev)
step("ce", lambda: F.cross_entropy(x, t).backward())
y = torch.randn(8192, 512, device=dev, requires_grad=True); ln = torch.nn.LayerNorm(512).to(dev)
step("ln", lambda: ln(y).sum().backward())
s = torch.randn(4096, 4096, device=dev, requires_grad=True)
step("softmax", lambda: torch.softmax(s, -1).sum().backward())
a, b = torch.randn(8192, 512, device=dev), torch.randn(512, 2048, device=dev)
step("mm", lambda: a @ b)
p = [torch.nn.Parameter(torch.randn(512, 512, device=dev)) for _ in range(4)]
for t_ in p: t_.grad = torch.randn_like(t_)
opt = torch.optim.AdamW(p, fused=True)
step("adamw", lambda: opt.step())
