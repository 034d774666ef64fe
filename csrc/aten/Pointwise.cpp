#include "Pointwise.h"
#include "../runtime/Launch.h"
#include <sstream>
#include <unordered_map>

namespace torch_ocl {
namespace {

constexpr int kMaxDims = 8;
constexpr int kMaxTensors = 8;

// Geometry passed by value: matches `Geom` in the generated source.
struct Geom {
  cl_uint ndim;
  cl_uint pad;
  cl_ulong size[kMaxDims];
  cl_long stride[kMaxTensors][kMaxDims];  // in elements
};

// Storage load/store expressions for an operand of dtype t named p at element index idx.
std::string load_expr(at::ScalarType t, const std::string& p, const std::string& idx) {
  switch (t) {
    case at::kHalf: return "vload_half(" + idx + ", (__global const half*)" + p + ")";
    case at::kBFloat16: return "bf16_to_float(" + p + "[" + idx + "])";
    case at::kBool: return "(" + p + "[" + idx + "] != 0)";
    default: return p + "[" + idx + "]";
  }
}
std::string store_stmt(at::ScalarType t, const std::string& p, const std::string& idx, const std::string& v) {
  switch (t) {
    case at::kHalf: return "vstore_half_rte((float)(" + v + "), " + idx + ", (__global half*)" + p + ");";
    case at::kBFloat16: return p + "[" + idx + "] = float_to_bf16((float)(" + v + "));";
    case at::kBool: return p + "[" + idx + "] = (uchar)((" + v + ") != 0);";
    default: return p + "[" + idx + "] = (" + cl_type_name(t) + ")(" + v + ");";
  }
}
std::string storage_type(at::ScalarType t) { return t == at::kHalf ? "ushort" : cl_type_name(t); }
std::string value_type(at::ScalarType t) {
  switch (t) {
    case at::kHalf: case at::kBFloat16: return "float";
    case at::kBool: return "uchar";
    default: return cl_type_name(t);
  }
}

void set_scalar_bytes(std::vector<char>& out, at::ScalarType ct, const c10::Scalar& s) {
  auto put = [&](auto v) {
    const char* p = reinterpret_cast<const char*>(&v);
    out.assign(p, p + sizeof(v));
  };
  switch (ct) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: put(s.to<float>()); break;
    case at::kDouble: put(s.to<double>()); break;
    case at::kChar: put(s.to<int8_t>()); break;
    case at::kByte: put(s.to<uint8_t>()); break;
    case at::kBool: put(static_cast<uint8_t>(s.to<bool>())); break;
    case at::kShort: put(s.to<int16_t>()); break;
    case at::kInt: put(s.to<int32_t>()); break;
    case at::kLong: put(s.to<int64_t>()); break;
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: scalar of dtype ", ct, " not supported");
  }
}

// A raw byte-blob kernel argument (scalars of runtime-chosen type).
struct RawArg {
  std::vector<char> bytes;
};

struct ProgramKey {
  std::string key;
};

struct Kernels {
  Kernel* contig;
  Kernel* strided32;
  Kernel* strided64;
};

std::mutex g_cache_mutex;
std::unordered_map<std::string, Kernels> g_cache;

std::string generate(const PointwiseSpec& spec, int nout, const std::vector<at::ScalarType>& dtypes,
                     const std::vector<bool>& is_scalar, at::ScalarType ct, int nscalars) {
  const int nt = static_cast<int>(dtypes.size());
  const char* in_names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  std::ostringstream s;
  s << kernel_source("elementwise") << "\n";
  s << "#define CT " << value_type(ct) << "\n";
  s << "typedef struct { uint ndim; uint pad; ulong size[" << kMaxDims << "]; long stride[" << kMaxTensors << "]["
    << kMaxDims << "]; } Geom;\n";
  // Argument list shared by the three kernels.
  std::ostringstream args;
  for (int k = 0; k < nt; ++k) {
    if (is_scalar[k]) {
      args << ", " << value_type(dtypes[k]) << " sv" << k;
    } else {
      args << ", PTR_ARG(" << storage_type(dtypes[k]) << ", t" << k << ")";
    }
  }
  for (int j = 0; j < nscalars; ++j) args << ", CT s" << j;
  // Body computing results from per-operand element indices o0..o{nt-1}.
  std::ostringstream body;
  for (int k = 0; k < nt; ++k)
    if (!is_scalar[k]) body << "    __global " << storage_type(dtypes[k]) << "* p" << k << " = PTR("
                            << storage_type(dtypes[k]) << ", t" << k << ");\n";
  std::ostringstream inner;
  for (int k = nout; k < nt; ++k) {
    int i = k - nout;
    at::ScalarType vt = (i < (int)spec.in_types.size() && spec.in_types[i] != at::ScalarType::Undefined)
        ? spec.in_types[i] : ct;
    std::string raw = is_scalar[k] ? "sv" + std::to_string(k) : load_expr(dtypes[k], "p" + std::to_string(k), "o" + std::to_string(k));
    inner << "      " << value_type(vt) << " " << in_names[i] << " = (" << value_type(vt) << ")(" << raw << ");\n";
  }
  for (int j = 0; j < nout; ++j) {
    at::ScalarType vt = (j < (int)spec.out_types.size() && spec.out_types[j] != at::ScalarType::Undefined)
        ? spec.out_types[j] : ct;
    inner << "      " << value_type(vt) << " r" << j << ";\n";
  }
  if (spec.expr.find(';') == std::string::npos) inner << "      r0 = (" << spec.expr << ");\n";
  else inner << "      " << spec.expr << "\n";
  for (int j = 0; j < nout; ++j)
    inner << "      " << store_stmt(dtypes[j], "p" + std::to_string(j), "o" + std::to_string(j), "r" + std::to_string(j)) << "\n";

  // Contiguous: every tensor operand is dense in iteration order.
  s << "__kernel void pw_contig(ulong n" << args.str() << ") {\n" << body.str();
  s << "  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {\n";
  for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "      ulong o" << k << " = i;\n";
  s << inner.str() << "  }\n}\n";
  // Strided: offsets from the linear index; IDX is uint when everything fits in 31 bits.
  for (int wide = 0; wide < 2; ++wide) {
    const char* I = wide ? "ulong" : "uint";
    const char* SI = wide ? "long" : "int";
    s << "__kernel void pw_strided" << (wide ? "64" : "32") << "(ulong n" << args.str() << ", Geom g) {\n"
      << body.str();
    s << "  for (" << I << " i = get_global_id(0); i < (" << I << ")n; i += get_global_size(0)) {\n";
    s << "    " << I << " rem = i;\n";
    for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "    " << SI << " o" << k << " = 0;\n";
    s << "    for (uint dd = 0; dd < g.ndim; ++dd) {\n      " << I << " sz = (" << I << ")g.size[dd];\n      " << I
      << " ix = rem % sz; rem /= sz;\n";
    for (int k = 0; k < nt; ++k)
      if (!is_scalar[k]) s << "      o" << k << " += (" << SI << ")ix * (" << SI << ")g.stride[" << k << "][dd];\n";
    s << "    }\n" << inner.str() << "  }\n}\n";
  }
  return s.str();
}

Kernels& kernels_for(Device& d, const PointwiseSpec& spec, int nout, const std::vector<at::ScalarType>& dtypes,
                     const std::vector<bool>& is_scalar, at::ScalarType ct, int nscalars) {
  std::string key;
  key.reserve(64);
  key += std::to_string(d.index);
  key += '|';
  key += spec.name;
  key += '|';
  key += std::to_string(nout);
  key += '|';
  key += std::to_string(static_cast<int>(ct));
  for (size_t k = 0; k < dtypes.size(); ++k) {
    key += ',';
    key += std::to_string(static_cast<int>(dtypes[k]));
    if (is_scalar[k]) key += 's';
  }
  key += '|';
  key += std::to_string(nscalars);
  {
    std::lock_guard<std::mutex> g(g_cache_mutex);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) return it->second;
  }
  std::string src = generate(spec, nout, dtypes, is_scalar, ct, nscalars);
  Kernels ks{&get_kernel_from_source(d, src, "", "pw_contig"), &get_kernel_from_source(d, src, "", "pw_strided32"),
             &get_kernel_from_source(d, src, "", "pw_strided64")};
  std::lock_guard<std::mutex> g(g_cache_mutex);
  return g_cache.emplace(key, ks).first->second;
}

// Sets and enqueues with a runtime-built argument list (the operand count varies).
struct ArgList {
  std::vector<std::pair<size_t, std::vector<char>>> items;  // (size, bytes); size 0 never used
  template <typename T>
  void add(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    items.emplace_back(sizeof(T), std::vector<char>(p, p + sizeof(T)));
  }
  void add_raw(std::vector<char> bytes) { items.emplace_back(bytes.size(), std::move(bytes)); }
};

void enqueue(Device& d, Kernel& k, size_t n, const ArgList& args) {
  const size_t local = 256;
  size_t groups = std::min<size_t>((n + local - 1) / local, 65536);
  size_t global = groups * local;
  {
    std::lock_guard<std::mutex> lock(d.launch_mutex);
    for (size_t i = 0; i < args.items.size(); ++i)
      OCL_CHECK(clSetKernelArg(k.k, static_cast<cl_uint>(i), args.items[i].first, args.items[i].second.data()),
                "setting argument " + std::to_string(i) + " of " + k.name);
    OCL_CHECK(clEnqueueNDRangeKernel(d.queue, k.k, 1, nullptr, &global, &local, 0, nullptr, nullptr),
              "launching pointwise kernel " + k.name);
  }
  k.launches.fetch_add(1, std::memory_order_relaxed);
  if (C10_UNLIKELY(env::sync_launches())) detail::after_launch(d, k);
}

void run_one(Device& d, at::TensorIteratorBase& iter, const PointwiseSpec& spec, c10::ArrayRef<c10::Scalar> scalars,
             at::ScalarType ct) {
  const int nt = iter.ntensors();
  const int nout = iter.noutputs();
  TORCH_CHECK(nt <= kMaxTensors, "torch_ocl: pointwise op with more than ", kMaxTensors, " operands");
  const int64_t n = iter.numel();
  if (n == 0) return;
  std::vector<at::ScalarType> dtypes(nt);
  std::vector<bool> is_scalar(nt);
  for (int k = 0; k < nt; ++k) {
    dtypes[k] = iter.dtype(k);
    is_scalar[k] = k >= nout && iter.is_cpu_scalar(k);
    check_dtype_supported(d, dtypes[k], spec.name.c_str());
  }
  // Geometry without size-1 dims; split when more than kMaxDims remain.
  std::vector<int> dims;
  for (int dd = 0; dd < iter.ndim(); ++dd)
    if (iter.shape()[dd] != 1) dims.push_back(dd);
  if (static_cast<int>(dims.size()) > kMaxDims) {
    const int outer = dims.back();
    for (int64_t i = 0; i < iter.shape()[outer]; ++i) {
      at::TensorIterator sub(iter);
      sub.narrow(outer, i, 1);
      run_one(d, sub, spec, scalars, ct);
    }
    return;
  }
  bool contig = true;
  for (int k = 0; k < nt && contig; ++k) {
    if (is_scalar[k]) continue;
    int64_t expect = iter.element_size(k);
    for (int dd : dims) {
      if (iter.strides(k)[dd] != expect) { contig = false; break; }
      expect *= iter.shape()[dd];
    }
  }
  Kernels& ks = kernels_for(d, spec, nout, dtypes, is_scalar, ct, static_cast<int>(scalars.size()));
  ArgList args;
  args.add(static_cast<cl_ulong>(n));
  int64_t max_off = n;
  for (int k = 0; k < nt; ++k) {
    if (is_scalar[k]) {
      std::vector<char> bytes;
      at::ScalarType vt = dtypes[k];
      c10::Scalar v = iter.tensor(k).item();
      set_scalar_bytes(bytes, vt == at::kHalf || vt == at::kBFloat16 ? at::kFloat : vt, v);
      args.add_raw(std::move(bytes));
    } else {
      Buf b = buf_ptr(iter.data_ptr(k));
      args.add(b.mem);
      args.add(b.offset);
    }
  }
  for (const auto& sc : scalars) {
    std::vector<char> bytes;
    set_scalar_bytes(bytes, ct, sc);
    args.add_raw(std::move(bytes));
  }
  if (contig) {
    enqueue(d, *ks.contig, n, args);
    return;
  }
  Geom g{};
  g.ndim = static_cast<cl_uint>(dims.size());
  for (size_t j = 0; j < dims.size(); ++j) {
    g.size[j] = iter.shape()[dims[j]];
    for (int k = 0; k < nt; ++k) {
      if (is_scalar[k]) continue;
      int64_t st = iter.strides(k)[dims[j]] / iter.element_size(k);
      g.stride[k][j] = st;
      max_off = std::max<int64_t>(max_off, std::abs(st) * static_cast<int64_t>(g.size[j]));
    }
  }
  args.add(g);
  const bool narrow = n < (int64_t(1) << 31) && max_off < (int64_t(1) << 31);
  enqueue(d, narrow ? *ks.strided32 : *ks.strided64, n, args);
}

}  // namespace

at::ScalarType compute_type_for(at::ScalarType t) {
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : t;
}

void pointwise(at::TensorIteratorBase& iter, const PointwiseSpec& spec, c10::ArrayRef<c10::Scalar> scalars) {
  if (iter.numel() == 0) return;
  Device& d = ocl_device(iter.tensor(0));
  at::ScalarType ct = spec.compute != at::ScalarType::Undefined ? spec.compute
                      : compute_type_for(iter.common_dtype());
  check_dtype_supported(d, ct, spec.name.c_str());
  run_one(d, iter, spec, scalars, ct);
}

at::TensorIterator make_unary_iter(const at::Tensor& out, const at::Tensor& a, bool promote_int_to_float) {
  return at::TensorIteratorConfig()
      .set_check_mem_overlap(true)
      .add_output(out)
      .add_const_input(a)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .promote_integer_inputs_to_float(promote_int_to_float)
      .build();
}

at::TensorIterator make_binary_iter(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                                    bool promote_int_to_float) {
  return at::TensorIteratorConfig()
      .set_check_mem_overlap(true)
      .add_output(out)
      .add_const_input(a)
      .add_const_input(b)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .promote_integer_inputs_to_float(promote_int_to_float)
      .build();
}

at::TensorIterator make_nullary_iter(const at::Tensor& out) {
  // Like the CPU fill_: writing the same value through overlapping views is well defined.
  return at::TensorIteratorConfig().set_check_mem_overlap(false).check_all_same_dtype(false).add_output(out)
      .resize_outputs(false).build();
}

void copy_on_device(const at::Tensor& dst, const at::Tensor& src) {
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .check_all_same_device(false)
                  .build();
  static const PointwiseSpec spec{"copy", "a", at::ScalarType::Undefined, {}, {}};
  // Compute in the source's value type so integer->integer copies never pass through float.
  PointwiseSpec s = spec;
  s.compute = compute_type_for(src.scalar_type());
  pointwise(iter, s);
}

}  // namespace torch_ocl
