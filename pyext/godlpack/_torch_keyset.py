"""Tensors for calibrating godlpack's read of PyTorch's negative/conjugate bits
(pyext/torch_quirks.c): one tensor whose bits are toggled, and probes whose
bits the read must reproduce. Used once per process, from C."""
from __future__ import annotations


def toggle():
    """(tensor, set_neg, set_conj): a tensor and PyTorch's in-place bit setters."""
    import torch

    return torch.ones(2, dtype=torch.complex64), torch._C._set_neg, torch._C._set_conj


def probes() -> list:
    """Tensors with and without the bits, of many dtypes, shapes and kinds."""
    import torch

    class Sub(torch.Tensor):
        pass

    z = torch.tensor([1 + 2j, 3 - 4j, 5j])
    f = torch.arange(6.0).reshape(2, 3)
    out = [
        f, f.t(), f[:, 1:], torch.zeros(0), torch.ones(()), torch.ones(4, dtype=torch.int64),
        torch.ones(3, dtype=torch.uint8), torch.ones(3, dtype=torch.bfloat16), torch.ones(3, dtype=torch.float16),
        z, z.conj(), z.conj().imag, z.conj().real, z.conj()[1:], torch._neg_view(z), torch._neg_view(z).conj(),
        torch._neg_view(f), torch._neg_view(f).t(), torch._neg_view(f).detach(), torch._neg_view(f)[1],
        torch._neg_view(torch.ones(3, dtype=torch.int32)), torch._neg_view(torch.ones(3, dtype=torch.uint8)),
        torch._neg_view(torch.zeros(0)), torch._neg_view(torch.ones(())), torch._neg_view(f).as_subclass(Sub),
        f.as_subclass(Sub), z.conj().as_subclass(Sub), torch.ones(3, requires_grad=True).detach(),
        torch.ones(2, 2, dtype=torch.complex128).conj(),
    ]
    with torch.inference_mode():
        out += [torch.ones(3), torch._neg_view(torch.ones(3)), torch.ones(2, dtype=torch.complex64).conj()]
    return out
