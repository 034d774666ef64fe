// The minimal op set every PrivateUse1 backend needs: allocation, copies between host and
// device (and between devices), views, resize_/set_, fill_/zero_, .item(), and the
// shallow-copy hook that keeps weight tying intact through module.to("ocl").
// Views reuse ATen's metadata-only implementations; nothing here dereferences a device
// pointer on the host.
#include "../runtime/Allocator.h"
#include "../runtime/Launch.h"
#include "Complex.h"
#include "Pointwise.h"
#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorShape.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <c10/core/DeviceGuard.h>
#include <cstdlib>
#include <cstring>
#include <torch/library.h>

namespace torch_ocl {

// Resizes a storage to new_nbytes on its device, keeping the leading bytes.
void grow_storage(const c10::Storage& storage, size_t new_nbytes) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  const size_t old = storage.nbytes();
  if (new_nbytes == old) return;
  int dev = storage.device().index();
  if (dev < 0) dev = current_device();
  c10::DataPtr fresh = allocate_on(dev, new_nbytes);
  const size_t keep = std::min(old, new_nbytes);
  if (keep > 0 && storage.data() != nullptr) {
    Device& d = get_device(dev);
    Buf src = buf_ptr(storage.data());
    Buf dst = buf_ptr(fresh.get());
    QueueLock g(d);
    OCL_CHECK(clEnqueueCopyBuffer(d.queue, src.mem, dst.mem, src.offset, dst.offset, keep, 0, nullptr, nullptr),
              "copying storage contents while resizing");
  }
  const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(fresh));
  const_cast<c10::Storage&>(storage).set_nbytes(new_nbytes);
}

namespace {

void check_device_dtype(c10::optional<at::ScalarType> dtype, c10::optional<at::Device> device) {
  at::ScalarType t = dtype.value_or(at::get_default_dtype_as_scalartype());
  int idx = device && device->has_index() ? device->index() : current_device();
  check_storable(peek_device(idx), t, "tensor creation");
}

// empty.memory_format(SymInt[] size, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory, MemoryFormat? memory_format) -> Tensor
at::Tensor empty_memory_format_ocl(c10::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                                   c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                                   c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format) {
  check_device_dtype(dtype, device);
  c10::OptionalDeviceGuard guard(device);
  get_device(current_device());
  constexpr c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_generic(size, get_allocator(), ks, c10::dtype_or_default(dtype), memory_format);
}

// empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory) -> Tensor
at::Tensor empty_strided_ocl(c10::IntArrayRef size, c10::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                             c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                             c10::optional<bool> pin_memory) {
  check_device_dtype(dtype, device);
  c10::OptionalDeviceGuard guard(device);
  get_device(current_device());
  constexpr c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_strided_generic(size, stride, get_allocator(), ks, c10::dtype_or_default(dtype));
}

// Host -> device bytes. Small writes are staged in a heap copy and enqueued without blocking
// (the device frees the copy once the write has completed: Device::stage_write), so uploading
// a batch does not drain the queue.
void write_to_device(Device& d, Buf dst, const void* src, size_t n) {
  if (n == 0) return;
  constexpr size_t kStageLimit = size_t(16) << 20;
  QueueLock g(d);
  if (n <= kStageLimit) {
    void* stage = std::malloc(n);
    if (stage) {
      std::memcpy(stage, src, n);
      cl_event ev = nullptr;
      cl_int err = clEnqueueWriteBuffer(d.queue, dst.mem, CL_FALSE, dst.offset, n, stage, 0, nullptr, &ev);
      if (err != CL_SUCCESS) std::free(stage);
      OCL_CHECK(err, "copying host memory to ocl:" + std::to_string(d.index));
      d.stage_write(ev, stage);
      return;
    }
  }
  OCL_CHECK(clEnqueueWriteBuffer(d.queue, dst.mem, CL_TRUE, dst.offset, n, src, 0, nullptr, nullptr),
            "copying host memory to ocl:" + std::to_string(d.index));
}

void read_from_device(Device& d, void* dst, Buf src, size_t n) {
  if (n == 0) return;
  read_buffer_checked(d, src.mem, src.offset, n, dst, "copying device memory to the host");
}

bool same_layout_dense(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes().equals(b.sizes()) && a.is_contiguous() && b.is_contiguous();
}

// Host tensor -> ocl tensor (any dtype, strides, broadcast).
void copy_host_to_device(const at::Tensor& dst, const at::Tensor& src) {
  Device& d = ocl_device(dst);
  if (dst.scalar_type() == src.scalar_type() && same_layout_dense(dst, src)) {
    write_to_device(d, buf(dst), src.const_data_ptr(), dst.nbytes());
    return;
  }
  // Convert and densify on the host (the data is there anyway), then one write.
  at::Tensor host = src.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
  if (dst.is_contiguous()) {
    write_to_device(d, buf(dst), host.const_data_ptr(), dst.nbytes());
    return;
  }
  at::Tensor staged = at::empty(dst.sizes(), dst.options());
  write_to_device(d, buf(staged), host.const_data_ptr(), staged.nbytes());
  copy_on_device(dst, staged);
}

// ocl tensor -> host tensor.
void copy_device_to_host(const at::Tensor& dst, const at::Tensor& src) {
  Device& d = ocl_device(src);
  if (dst.scalar_type() == src.scalar_type() && same_layout_dense(dst, src)) {
    read_from_device(d, dst.mutable_data_ptr(), buf(src), src.nbytes());
    return;
  }
  at::Tensor dense = src;
  if (!src.is_contiguous()) {
    dense = at::empty(src.sizes(), src.options());
    copy_on_device(dense, src);
  }
  at::Tensor host = at::empty(dense.sizes(), dense.options().device(at::kCPU));
  read_from_device(d, host.mutable_data_ptr(), buf(dense), dense.nbytes());
  dst.copy_(host);
}

// A new tensor holding src's stored values conjugated and/or negated, on src's device.
at::Tensor conj_neg_copy(const at::Tensor& src, bool conj, bool neg) {
  if (src.device().is_cpu()) {
    at::Tensor t = src.clone();
    if (conj) t.conj_physical_();
    if (neg) t.neg_();
    return t;
  }
  at::Tensor out = at::empty(src.sizes(), src.options());
  auto iter = make_unary_iter(out, src);
  static const PointwiseSpec kConj{"copy_conj", "a", at::ScalarType::Undefined, {}, {}, false, {}, "cx_conj(a)"};
  static const PointwiseSpec kNeg{"copy_neg", "-a", at::ScalarType::Undefined, {}, {}, false, {}, "-a"};
  static const PointwiseSpec kConjNeg{"copy_conj_neg", "-a", at::ScalarType::Undefined, {}, {}, false, {}, "-cx_conj(a)"};
  pointwise(iter, conj && neg ? kConjNeg : conj ? kConj : kNeg);
  return out;
}

at::Tensor copy_physical(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);

// _copy_from(Tensor self, Tensor dst, bool non_blocking=False) -> Tensor
// Copies values, not stored bits: a source or destination with the conjugate or negative bit
// set (x.conj(), x.conj().imag) gets its stored values transformed to match.
at::Tensor _copy_from_ocl(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(dst.defined(), "torch_ocl: copy destination is undefined");
  if (self.is_conj() || self.is_neg() || dst.is_conj() || dst.is_neg()) {
    const bool conj = self.is_conj() != dst.is_conj(), neg = self.is_neg() != dst.is_neg();
    at::Tensor src = stored_values(self);
    if (conj || neg) src = conj_neg_copy(src, conj, neg);
    copy_physical(src, stored_values(dst), non_blocking);
    return dst;
  }
  return copy_physical(self, dst, non_blocking);
}

at::Tensor copy_physical(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(at::is_expandable_to(self.sizes(), dst.sizes()), "The size of tensor a (", self.sizes(),
              ") must match the size of tensor b (", dst.sizes(), ") at non-singleton dimension");
  if (dst.numel() == 0) return dst;
  const bool src_dev = self.device().type() == c10::DeviceType::PrivateUse1;
  const bool dst_dev = dst.device().type() == c10::DeviceType::PrivateUse1;
  if (src_dev && dst_dev) {
    if (self.device() == dst.device()) {
      if (self.is_same(dst)) return dst;
      if (dst.scalar_type() == self.scalar_type() && same_layout_dense(dst, self)) {
        Device& d = ocl_device(dst);
        Buf s = buf(self), t = buf(dst);
        if (s.mem != t.mem || s.offset + self.nbytes() <= t.offset || t.offset + dst.nbytes() <= s.offset) {
          QueueLock g(d);
          OCL_CHECK(clEnqueueCopyBuffer(d.queue, s.mem, t.mem, s.offset, t.offset, dst.nbytes(), 0, nullptr, nullptr),
                    "copying device memory");
          return dst;
        }
      }
      copy_on_device(dst, self);
    } else {
      // Devices have separate contexts: stage through the host.
      at::Tensor host = at::empty(self.sizes(), self.options().device(at::kCPU));
      copy_device_to_host(host, self);
      copy_host_to_device(dst, host);
    }
  } else if (dst_dev) {
    copy_host_to_device(dst, self);
  } else {
    TORCH_CHECK(src_dev, "torch_ocl: _copy_from called without an ocl tensor");
    copy_device_to_host(dst, self);
  }
  return dst;
}

// _copy_from_and_resize(Tensor self, Tensor dst) -> Tensor
at::Tensor _copy_from_and_resize_ocl(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return _copy_from_ocl(self, dst, false);
}

// resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)
const at::Tensor& resize__ocl(const at::Tensor& self, c10::IntArrayRef size,
                              c10::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  at::native::resize_impl_cpu_(impl, size, std::nullopt, /*resize_storage=*/false);
  if (memory_format.has_value() && *memory_format != at::MemoryFormat::Preserve)
    impl->empty_tensor_restride(*memory_format);
  const size_t needed = at::detail::computeStorageNbytes(self.sizes(), self.strides(), self.itemsize(),
                                                         self.storage_offset());
  if (self.numel() > 0 && needed > self.storage().nbytes()) grow_storage(self.storage(), needed);
  return self;
}

void set_geometry_and_grow(const at::Tensor& self, int64_t offset, c10::IntArrayRef size,
                           c10::IntArrayRef stride) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(offset);
  at::native::resize_impl_cpu_(impl, size, stride, /*resize_storage=*/false);
  const size_t needed = at::detail::computeStorageNbytes(size, stride, self.itemsize(), offset);
  if (self.numel() > 0 && needed > self.storage().nbytes()) grow_storage(self.storage(), needed);
}

// set_.source_Storage_storage_offset(Tensor(a!) self, Storage source, SymInt storage_offset, SymInt[] size, SymInt[] stride=[]) -> Tensor(a!)
at::Tensor& set_storage_ocl(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size,
                            c10::IntArrayRef stride) {
  TORCH_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  if (!self.storage().is_alias_of(source)) self.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(source));
  std::vector<int64_t> st;
  if (stride.empty()) {
    auto cs = c10::contiguous_strides(size);
    st.assign(cs.begin(), cs.end());
  } else {
    st.assign(stride.begin(), stride.end());
  }
  set_geometry_and_grow(self, offset, size, st);
  return self;
}

// set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)
at::Tensor& set_source_storage_ocl(at::Tensor& self, c10::Storage source) {
  const int64_t n = static_cast<int64_t>(source.nbytes() / self.itemsize());
  return set_storage_ocl(self, std::move(source), 0, {n}, {});
}

// set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)
at::Tensor& set_source_tensor_ocl(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_storage_ocl(self, source.storage(), source.storage_offset(), source.sizes(), source.strides());
}

// set_(Tensor(a!) self) -> Tensor(a!)
at::Tensor& set_empty_ocl(at::Tensor& self) {
  c10::Storage empty_storage(c10::Storage::use_byte_size_t(), 0, get_allocator(), /*resizable=*/true);
  return set_storage_ocl(self, empty_storage, 0, {0}, {});
}

// fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
at::Tensor& fill__scalar_ocl(at::Tensor& self, const c10::Scalar& value) {
  if (self.numel() == 0) return self;
  auto iter = make_nullary_iter(self);
  static const PointwiseSpec spec{"fill", "s0", at::ScalarType::Undefined, {}, {}, false, {}, "s0"};
  PointwiseSpec s = spec;
  s.compute = compute_type_for(self.scalar_type());
  pointwise(iter, s, {value});
  return self;
}

// fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)
at::Tensor& fill__tensor_ocl(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  if (value.device().is_cpu()) return fill__scalar_ocl(self, value.item());
  if (self.numel() == 0) return self;
  copy_on_device(self, value.expand(self.sizes()));
  return self;
}

// zero_(Tensor(a!) self) -> Tensor(a!)
at::Tensor& zero__ocl(at::Tensor& self) { return fill__scalar_ocl(self, 0); }

// _efficientzerotensor(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
// Autograd asks for it as the gradient of piecewise-constant ops (sign, round, ...). A real
// zero-filled tensor is semantically the same as the CPU's storage-less ZeroTensor.
at::Tensor _efficientzerotensor_ocl(c10::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                                    c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                                    c10::optional<bool> pin_memory) {
  at::Tensor t = empty_memory_format_ocl(size, dtype, layout, device, pin_memory, std::nullopt);
  return fill__scalar_ocl(t, 0);
}

// _local_scalar_dense(Tensor self) -> Scalar
c10::Scalar _local_scalar_dense_ocl(const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, "_local_scalar_dense: empty tensor");
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  read_from_device(ocl_device(self), host.mutable_data_ptr(), buf(self), self.itemsize());
  return host.item();
}

// _has_compatible_shallow_copy_type(Tensor self, Tensor from) -> bool
bool _has_compatible_shallow_copy_type_ocl(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    auto ks = t.key_set();
    return ks.has(c10::DispatchKey::CPU) || ks.has(c10::DispatchKey::PrivateUse1);
  };
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) || (dense(self) && dense(from));
}

// record_stream(Tensor(a!) self, Stream s) -> ()
void record_stream_ocl(at::Tensor&, c10::Stream) {
  // One in-order queue per device: a block is never reused before earlier work on it ends.
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format_ocl);
  m.impl("empty_strided", empty_strided_ocl);
  m.impl("_copy_from", _copy_from_ocl);
  m.impl("_copy_from_and_resize", _copy_from_and_resize_ocl);
  m.impl("resize_", resize__ocl);
  m.impl("set_.source_Storage_storage_offset", set_storage_ocl);
  m.impl("set_.source_Storage", set_source_storage_ocl);
  m.impl("set_.source_Tensor", set_source_tensor_ocl);
  m.impl("set_", set_empty_ocl);
  m.impl("fill_.Scalar", fill__scalar_ocl);
  m.impl("fill_.Tensor", fill__tensor_ocl);
  m.impl("zero_", zero__ocl);
  m.impl("_efficientzerotensor", _efficientzerotensor_ocl);
  m.impl("_local_scalar_dense", _local_scalar_dense_ocl);
  m.impl("_has_compatible_shallow_copy_type", _has_compatible_shallow_copy_type_ocl);
  m.impl("record_stream", record_stream_ocl);
  m.impl("view", at::native::view);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
}

// _copy_from reads the conjugate and negative bits itself (above). Without these fallthroughs
// the math-bit fallbacks would resolve a conjugate source first, and resolving is a copy_
// that on this device calls _copy_from again, without end. _copy_from runs only for devices
// that ATen's copy_ does not handle itself (CPU and CUDA never reach it).
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace torch_ocl
