// The generated pointwise engine (see Pointwise.h): OpenCL source generated once per
// (spec, operand dtypes, compute type, CPU-scalar operands), three kernels per program
// (vectorized contiguous, flat contiguous, strided), chosen per launch from the geometry.
// The per-launch host path does no string building: the kernel cache is keyed by the
// spec's short name plus a small POD of dtypes, and arguments are set from inline storage.
#include "Pointwise.h"
#include "Complex.h"
#include "../runtime/Launch.h"
#include <cstring>
#include <sstream>
#include <unordered_map>

namespace torch_ocl {
namespace {

constexpr int kMaxDims = 8;
constexpr int kMaxTensors = 8;
constexpr int kVec = 4;             // elements per work-item in pw_vec (one 16-byte float4)
constexpr size_t kLocal = 256;      // work-group size of every pointwise launch
constexpr size_t kMaxGroups = 65536;  // grid-stride loops cover the rest
constexpr cl_ulong kMinRowsInner = 4;  // pw_rows: the shortest innermost dimension it takes

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
// The value v converted to what is stored for dtype t.
std::string stored_value(at::ScalarType t, const std::string& v) {
  switch (t) {
    case at::kHalf: return "(float)(" + v + ")";
    case at::kBFloat16: return "float_to_bf16((float)(" + v + "))";
    case at::kBool: return "(uchar)((" + v + ") != 0)";
    // Narrow integers through int, as C++ casts on the CPU compile: a float beyond the narrow
    // type's range wraps (300.0 -> int8 44) rather than saturating, which PoCL's vectorized
    // float -> short conversion did (70000.5 -> int16 32767 where the CPU gives 4464).
    case at::kChar: case at::kShort: case at::kByte: return "(" + cl_type_name(t) + ")(int)(" + v + ")";
    case at::kComplexFloat: case at::kComplexDouble: return v;  // complex_convert() made it one
    default: return "(" + cl_type_name(t) + ")(" + v + ")";
  }
}
std::string store_stmt(at::ScalarType t, const std::string& p, const std::string& idx, const std::string& v) {
  if (t == at::kHalf) return "vstore_half_rte((float)(" + v + "), " + idx + ", (__global half*)" + p + ");";
  return p + "[" + idx + "] = " + stored_value(t, v) + ";";
}
std::string storage_type(at::ScalarType t) {
  if (at::isComplexType(t)) return cl_complex_type_name(t);
  return t == at::kHalf ? "ushort" : cl_type_name(t);
}
std::string value_type(at::ScalarType t) {
  switch (t) {
    case at::kHalf: case at::kBFloat16: return "float";
    case at::kBool: return "uchar";
    case at::kComplexFloat: case at::kComplexDouble: return cl_complex_type_name(t);
    default: return cl_type_name(t);
  }
}
// The expression v, of value type `from`, as a value of type `to` where either is complex: a
// real value becomes (v, 0), a complex one converts lane-wise or gives its real part (as a
// complex -> real copy does on the CPU). Real -> real is left to the caller's cast.
std::string complex_convert(at::ScalarType from, at::ScalarType to, const std::string& v) {
  const bool cf = at::isComplexType(from), ctc = at::isComplexType(to);
  if (cf && ctc) return from == to ? v : "convert_" + value_type(to) + "(" + v + ")";
  if (ctc) {
    const std::string real = to == at::kComplexDouble ? "double" : "float";
    return "(" + value_type(to) + ")((" + real + ")(" + v + "), (" + real + ")0)";
  }
  if (cf && to == at::kBool) return "((" + v + ").x != 0 || (" + v + ").y != 0)";
  if (cf) return "(" + v + ").x";
  return v;
}

// Writes s converted to the value type of ct into dst (at most 16 bytes); returns the size.
size_t scalar_bytes(void* dst, at::ScalarType ct, const c10::Scalar& s) {
  auto put = [&](auto v) {
    std::memcpy(dst, &v, sizeof(v));
    return sizeof(v);
  };
  switch (ct) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: return put(s.to<float>());
    case at::kDouble: return put(s.to<double>());
    case at::kChar: return put(s.to<int8_t>());
    case at::kByte: return put(s.to<uint8_t>());
    case at::kBool: return put(static_cast<uint8_t>(s.to<bool>()));
    case at::kShort: return put(s.to<int16_t>());
    case at::kInt: return put(s.to<int32_t>());
    case at::kLong: return put(s.to<int64_t>());
    case at::kComplexFloat: return put(s.to<c10::complex<float>>());
    case at::kComplexDouble: return put(s.to<c10::complex<double>>());
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: scalar of dtype ", ct, " not supported");
  }
}

struct Kernels {
  Kernel* vec;
  Kernel* contig;
  Kernel* strided32;
  Kernel* strided64;
  Kernel* rows;
  int64_t vec_elems;  // elements per pw_vec work-item (kVecForm with the vector form, else kVec)
};

// The part of a cache key that is not the spec name: small and compared with memcmp.
struct KeyBits {
  int8_t dev, nout, nt, nscalars, ct, errors;
  int8_t dtypes[kMaxTensors];
  uint8_t scalar_mask;
};
struct CacheEntry {
  KeyBits bits;
  std::string expr;  // guards against two specs sharing a name
  Kernels ks;
};

std::mutex g_cache_mutex;
std::unordered_map<std::string, std::vector<CacheEntry>> g_cache;  // by spec name

const char* const kInNames[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
const char* const kLanes[] = {".s0", ".s1", ".s2", ".s3"};

std::string ct_defines(at::ScalarType ct) {
  std::ostringstream s;
  // A complex compute type: CX is the float2 / double2 the expression computes in, and CT its
  // real part type, so elementwise.cl's helpers compile as they do for float / double.
  const bool cx = at::isComplexType(ct);
  if (cx) {
    s << "#define CX " << value_type(ct) << "\n#define CT_IS_COMPLEX 1\n";
    ct = ct == at::kComplexDouble ? at::kDouble : at::kFloat;
  } else {
    s << "#define CT_IS_COMPLEX 0\n";
  }
  s << "#define CT " << value_type(ct) << "\n#define CT8 " << value_type(ct) << "8\n";
  const bool fp = at::isFloatingType(ct), boolean = ct == at::kBool;
  s << "#define CT_IS_FP " << fp << "\n#define CT_IS_BOOL " << boolean << "\n#define CT_IS_INT " << (!fp && !boolean)
    << "\n#define CT_IS_DOUBLE " << (ct == at::kDouble) << "\n#define CT_IS_SIGNED "
    << (fp || ct == at::kChar || ct == at::kShort || ct == at::kInt || ct == at::kLong) << "\n";
  return s.str();
}

// Whether pw_vec computes spec.vec_expr on 8-element vectors (kVecForm elements per work-item):
// on CPU devices, for a single output with every operand a tensor stored in the floating compute
// type. GPUs keep a work-item per 4 elements computed lane by lane: on an H200 the vector form
// ran GELU over 2^26 floats at 50 % of the copy bandwidth against 98 % (bench/RESULTS.md,
// session 12).
constexpr int64_t kVecFormUnroll = 4;
constexpr int64_t kVecForm = 8 * kVecFormUnroll;
template <typename Dtypes, typename Flags>
bool uses_vector_form(const PointwiseSpec& spec, bool cpu_device, int nout, int nt, const Dtypes& dtypes,
                      const Flags& is_scalar, at::ScalarType ct) {
  bool v = cpu_device && !spec.vec_expr.empty() && nout == 1 && at::isFloatingType(ct) && !spec.reports_errors;
  for (int k = 0; k < nt; ++k) v = v && !is_scalar[k] && dtypes[k] == ct;
  return v;
}

std::string generate(const PointwiseSpec& spec, bool vector_form, int nout, const std::vector<at::ScalarType>& dtypes,
                     const std::vector<bool>& is_scalar, at::ScalarType ct, int nscalars) {
  const int nt = static_cast<int>(dtypes.size());
  const bool complex = at::isComplexType(ct);
  const std::string& expr = complex ? spec.cexpr : spec.expr;
  std::ostringstream s;
  s << ct_defines(ct) << kernel_source(spec.prelude.empty() ? "elementwise" : spec.prelude) << "\n";
  if (complex) s << kernel_source("complex.clh") << "\n";
  s << "typedef struct { uint ndim; uint pad; ulong size[" << kMaxDims << "]; long stride[" << kMaxTensors << "]["
    << kMaxDims << "]; } Geom;\n";
  // Argument list shared by the kernels.
  std::ostringstream args;
  if (spec.reports_errors) args << ", __global int* err_flag";
  for (int k = 0; k < nt; ++k) {
    if (is_scalar[k]) args << ", " << value_type(dtypes[k]) << " sv" << k;
    else args << ", PTR_ARG(" << storage_type(dtypes[k]) << ", t" << k << ")";
  }
  for (int j = 0; j < nscalars; ++j) args << ", " << value_type(ct) << " s" << j;
  std::ostringstream ptrs;
  for (int k = 0; k < nt; ++k)
    if (!is_scalar[k])
      ptrs << "  __global " << storage_type(dtypes[k]) << "* p" << k << " = PTR(" << storage_type(dtypes[k]) << ", t"
           << k << ");\n";

  // One element: inputs from raw[k], results stored through store(j, value).
  auto block = [&](const std::vector<std::string>& raw, auto store) {
    std::ostringstream b;
    b << "    {\n";
    for (int k = nout; k < nt; ++k) {
      const int i = k - nout;
      at::ScalarType vt = (i < (int)spec.in_types.size() && spec.in_types[i] != at::ScalarType::Undefined)
          ? spec.in_types[i] : ct;
      b << "      " << value_type(vt) << " " << kInNames[i] << " = (" << value_type(vt) << ")("
        << complex_convert(dtypes[k], vt, raw[k]) << ");\n";
    }
    std::vector<at::ScalarType> result_types(nout);
    for (int j = 0; j < nout; ++j) {
      at::ScalarType vt = (j < (int)spec.out_types.size() && spec.out_types[j] != at::ScalarType::Undefined)
          ? spec.out_types[j] : ct;
      b << "      " << value_type(vt) << " r" << j << ";\n";
      result_types[j] = vt;
    }
    if (expr.find(';') == std::string::npos) b << "      r0 = (" << expr << ");\n";
    else b << "      " << expr << "\n";
    for (int j = 0; j < nout; ++j)
      b << "      " << store(j, complex_convert(result_types[j], dtypes[j], "r" + std::to_string(j))) << "\n";
    b << "    }\n";
    return b.str();
  };
  auto scalar_block = [&](const std::string& idx_prefix) {
    std::vector<std::string> raw(nt);
    for (int k = nout; k < nt; ++k)
      raw[k] = is_scalar[k] ? "sv" + std::to_string(k)
                            : load_expr(dtypes[k], "p" + std::to_string(k), idx_prefix + std::to_string(k));
    return block(raw, [&](int j, const std::string& v) {
      return store_stmt(dtypes[j], "p" + std::to_string(j), idx_prefix + std::to_string(j), v);
    });
  };

  // Vectorized contiguous: kVec elements per work-item through aligned vector accesses,
  // the last n % kVec elements by the first work-items. A spec with a vector form where every
  // operand is a tensor of the (floating) compute type: vec_expr over 8-element vectors.
  s << "__kernel void pw_vec(ulong n" << args.str() << ") {\n" << ptrs.str();
  bool any_complex = complex;
  for (int k = 0; k < nt; ++k) any_complex = any_complex || at::isComplexType(dtypes[k]);
  if (any_complex) {
    // Never launched (run_one takes pw_contig for complex operands); a body that compiles.
    s << "  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {\n";
    for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "    const ulong o" << k << " = i;\n";
    s << scalar_block("o") << "  }\n}\n";
  } else if (vector_form) {
    // kVecFormUnroll vectors per work-item, each computed in its own block before any is stored:
    // independent chains the compiler can interleave (vec_expr's are long dependent chains).
    static_assert(kVecForm == 8 * kVecFormUnroll, "pw_vec's vector form loads CT8 vectors");
    // Vector number `v`'s inputs and vec_expr, assigned to `dst` (or stored, for "").
    const auto vector_block = [&](const std::string& v, const std::string& dst) {
      s << "    {\n      const ulong v = " << v << ";\n";
      for (int k = nout; k < nt; ++k) s << "      const CT8 " << kInNames[k - nout] << " = vload8(v, p" << k << ");\n";
      if (dst.empty()) s << "      vstore8((" << spec.vec_expr << "), v, p0);\n    }\n";
      else s << "      " << dst << " = (" << spec.vec_expr << ");\n    }\n";
    };
    s << "  const ulong n8 = n / 8, nq = n8 / " << kVecFormUnroll << ";\n"
      << "  for (ulong q = get_global_id(0); q < nq; q += get_global_size(0)) {\n";
    for (int u = 0; u < kVecFormUnroll; ++u) s << "    CT8 r" << u << ";\n";
    for (int u = 0; u < kVecFormUnroll; ++u)
      vector_block("q * " + std::to_string(kVecFormUnroll) + " + " + std::to_string(u), "r" + std::to_string(u));
    for (int u = 0; u < kVecFormUnroll; ++u)
      s << "    vstore8(r" << u << ", q * " << kVecFormUnroll << " + " << u << ", p0);\n";
    s << "  }\n  for (ulong w = nq * " << kVecFormUnroll << " + get_global_id(0); w < n8; w += get_global_size(0))\n";
    vector_block("w", "");
    s << "  for (ulong i = n8 * 8 + get_global_id(0); i < n; i += get_global_size(0)) {\n";
    for (int k = 0; k < nt; ++k) s << "    const ulong o" << k << " = i;\n";
    s << scalar_block("o") << "  }\n}\n";
  } else {
    s << "  const ulong nv = n / " << kVec << ";\n";
    s << "  for (ulong v = get_global_id(0); v < nv; v += get_global_size(0)) {\n";
    for (int k = 0; k < nt; ++k) {
      if (is_scalar[k]) continue;
      const std::string st = storage_type(dtypes[k]), pk = "p" + std::to_string(k), vk = "v" + std::to_string(k);
      if (dtypes[k] == at::kHalf) {
        if (k >= nout) s << "    float4 " << vk << " = vload_half4(v, (__global const half*)" << pk << ");\n";
        else s << "    float4 " << vk << ";\n";
      } else {
        s << "    " << st << "4 " << vk;
        if (k >= nout) s << " = ((__global " << st << "4*)" << pk << ")[v]";
        s << ";\n";
      }
    }
    for (int lane = 0; lane < kVec; ++lane) {
      std::vector<std::string> raw(nt);
      for (int k = nout; k < nt; ++k) {
        if (is_scalar[k]) { raw[k] = "sv" + std::to_string(k); continue; }
        std::string e = "v" + std::to_string(k) + kLanes[lane];
        if (dtypes[k] == at::kBFloat16) e = "bf16_to_float(" + e + ")";
        else if (dtypes[k] == at::kBool) e = "(" + e + " != 0)";
        raw[k] = e;
      }
      s << block(raw, [&](int j, const std::string& v) {
        return "v" + std::to_string(j) + kLanes[lane] + " = " + stored_value(dtypes[j], v) + ";";
      });
    }
    for (int j = 0; j < nout; ++j) {
      const std::string st = storage_type(dtypes[j]), pj = "p" + std::to_string(j), vj = "v" + std::to_string(j);
      if (dtypes[j] == at::kHalf) s << "    vstore_half4_rte(" << vj << ", v, (__global half*)" << pj << ");\n";
      else s << "    ((__global " << st << "4*)" << pj << ")[v] = " << vj << ";\n";
    }
    s << "  }\n  if (get_global_id(0) < n - nv * " << kVec << ") {\n    const ulong i = nv * " << kVec
      << " + get_global_id(0);\n";
    for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "    const ulong o" << k << " = i;\n";
    s << scalar_block("o") << "  }\n}\n";
  }

  // Flat contiguous: every tensor operand is dense in iteration order.
  s << "__kernel void pw_contig(ulong n" << args.str() << ") {\n" << ptrs.str();
  s << "  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {\n";
  for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "    const ulong o" << k << " = i;\n";
  s << scalar_block("o") << "  }\n}\n";

  // Strided: offsets from the linear index; 32-bit index math when everything fits in 31 bits.
  for (int wide = 0; wide < 2; ++wide) {
    const char* I = wide ? "ulong" : "uint";
    const char* SI = wide ? "long" : "int";
    s << "__kernel void pw_strided" << (wide ? "64" : "32") << "(ulong n" << args.str() << ", Geom g) {\n"
      << ptrs.str();
    s << "  for (" << I << " i = get_global_id(0); i < (" << I << ")n; i += get_global_size(0)) {\n";
    s << "    " << I << " rem = i;\n";
    for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "    " << SI << " o" << k << " = 0;\n";
    s << "    for (uint dd = 0; dd < g.ndim; ++dd) {\n      " << I << " sz = (" << I << ")g.size[dd];\n      " << I
      << " ix = rem % sz; rem /= sz;\n";
    for (int k = 0; k < nt; ++k)
      if (!is_scalar[k]) s << "      o" << k << " += (" << SI << ")ix * (" << SI << ")g.stride[" << k << "][dd];\n";
    s << "    }\n" << scalar_block("o") << "  }\n}\n";
  }

  // Strided by rows of the innermost dimension (CPU devices): offsets from the row index once
  // per row, then a loop along the row. A work-item per element pays ndim divisions for every
  // element, which a GPU hides and a CPU core does not.
  s << "__kernel void pw_rows(ulong n" << args.str() << ", Geom g) {\n" << ptrs.str();
  s << "  const ulong inner = g.size[0], rows = n / inner;\n";
  s << "  for (ulong r = get_global_id(0); r < rows; r += get_global_size(0)) {\n    ulong rem = r;\n";
  for (int k = 0; k < nt; ++k) if (!is_scalar[k]) s << "    long o" << k << " = 0;\n";
  s << "    for (uint dd = 1; dd < g.ndim; ++dd) {\n      const ulong sz = g.size[dd], ix = rem % sz;\n"
    << "      rem /= sz;\n";
  for (int k = 0; k < nt; ++k)
    if (!is_scalar[k]) s << "      o" << k << " += (long)ix * g.stride[" << k << "][dd];\n";
  s << "    }\n    for (ulong j = 0; j < inner; ++j) {\n" << scalar_block("o");
  for (int k = 0; k < nt; ++k)
    if (!is_scalar[k]) s << "      o" << k << " += g.stride[" << k << "][0];\n";
  s << "    }\n  }\n}\n";
  return s.str();
}

using DtypeArray = std::array<at::ScalarType, kMaxTensors>;
using FlagArray = std::array<bool, kMaxTensors>;

Kernels& kernels_for(Device& d, const PointwiseSpec& spec, int nout, int nt, const DtypeArray& dtypes,
                     const FlagArray& is_scalar, at::ScalarType ct, int nscalars) {
  KeyBits bits;
  std::memset(&bits, 0, sizeof(bits));
  bits.dev = static_cast<int8_t>(d.index);
  bits.nout = static_cast<int8_t>(nout);
  bits.nt = static_cast<int8_t>(nt);
  bits.nscalars = static_cast<int8_t>(nscalars);
  bits.ct = static_cast<int8_t>(ct);
  bits.errors = spec.reports_errors;
  for (int k = 0; k < nt; ++k) {
    bits.dtypes[k] = static_cast<int8_t>(dtypes[k]);
    if (is_scalar[k]) bits.scalar_mask |= static_cast<uint8_t>(1u << k);
  }
  auto find = [&]() -> Kernels* {
    auto it = g_cache.find(spec.name);
    if (it == g_cache.end()) return nullptr;
    for (auto& e : it->second) {
      if (std::memcmp(&e.bits, &bits, sizeof(bits)) != 0) continue;
      TORCH_INTERNAL_ASSERT(e.expr == spec.expr, "torch_ocl: two pointwise specs share the name ", spec.name);
      return &e.ks;
    }
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> g(g_cache_mutex);
    if (Kernels* ks = find()) return *ks;
  }
  const bool vector_form = uses_vector_form(spec, d.info.is_cpu(), nout, nt, dtypes, is_scalar, ct);
  std::string src = generate(spec, vector_form, nout, std::vector<at::ScalarType>(dtypes.begin(), dtypes.begin() + nt),
                             std::vector<bool>(is_scalar.begin(), is_scalar.begin() + nt), ct, nscalars);
  const std::string opts = ieee_div_sqrt_option(d.info);
  Kernels ks{&get_kernel_from_source(d, src, opts, "pw_vec"), &get_kernel_from_source(d, src, opts, "pw_contig"),
             &get_kernel_from_source(d, src, opts, "pw_strided32"),
             &get_kernel_from_source(d, src, opts, "pw_strided64"),
             &get_kernel_from_source(d, src, opts, "pw_rows"), vector_form ? kVecForm : kVec};
  std::lock_guard<std::mutex> g(g_cache_mutex);
  if (Kernels* existing = find()) return *existing;  // another thread built it meanwhile
  auto& entries = g_cache[spec.name];
  entries.push_back(CacheEntry{bits, spec.expr, ks});
  return entries.back().ks;
}

// A runtime-built argument list (the operand count varies) with inline storage, so
// building it allocates nothing; large arguments (Geom) are referenced, not copied.
struct ArgList {
  struct Item {
    size_t size;
    const void* ref;
    alignas(8) unsigned char bytes[16];
  };
  std::array<Item, 3 * kMaxTensors + 8> items;
  size_t n = 0;
  template <typename T>
  void add(const T& v) {
    static_assert(sizeof(T) <= 16 && std::is_trivially_copyable<T>::value, "inline kernel argument");
    Item& it = items[n++];
    it.size = sizeof(T);
    it.ref = nullptr;
    std::memcpy(it.bytes, &v, sizeof(T));
  }
  void add_scalar(at::ScalarType t, const c10::Scalar& v) {
    Item& it = items[n++];
    it.ref = nullptr;
    it.size = scalar_bytes(it.bytes, t, v);
  }
  void add_ref(const void* p, size_t size) {
    Item& it = items[n++];
    it.size = size;
    it.ref = p;
  }
};

void enqueue(Device& d, Kernel& k, size_t work_items, const ArgList& args) {
  const size_t groups = std::max<size_t>(1, std::min<size_t>((work_items + kLocal - 1) / kLocal, kMaxGroups));
  const size_t global = groups * kLocal, local = kLocal;
  LaunchRecord r = detail::make_record(k, 1, &global, &local);
  for (size_t i = 0; i < args.n; ++i) r.add(args.items[i].ref ? args.items[i].ref : args.items[i].bytes, args.items[i].size);
  submit_launch(d, std::move(r));
}

void run_one(Device& d, at::TensorIteratorBase& iter, const PointwiseSpec& spec, c10::ArrayRef<c10::Scalar> scalars,
             at::ScalarType ct) {
  const int nt = iter.ntensors();
  const int nout = iter.noutputs();
  TORCH_CHECK(nt <= kMaxTensors, "torch_ocl: pointwise op with more than ", kMaxTensors, " operands");
  TORCH_CHECK(scalars.size() <= 8, "torch_ocl: pointwise op with more than 8 scalars");
  const int64_t n = iter.numel();
  if (n == 0) return;
  // Geometry without size-1 dims; split when more than kMaxDims remain.
  int ndims = 0;
  std::array<int, 64> dims{};
  for (int dd = 0; dd < iter.ndim(); ++dd)
    if (iter.shape()[dd] != 1) dims[ndims++] = dd;
  if (ndims > kMaxDims) {
    const int outer = dims[ndims - 1];
    for (int64_t i = 0; i < iter.shape()[outer]; ++i) {
      at::TensorIterator sub(iter);
      sub.narrow(outer, i, 1);
      run_one(d, sub, spec, scalars, ct);
    }
    return;
  }
  DtypeArray dtypes{};  // fixed arrays: a launch allocates nothing on the heap
  FlagArray is_scalar{};
  bool any_complex = at::isComplexType(ct);
  for (int k = 0; k < nt; ++k) {
    dtypes[k] = iter.dtype(k);
    is_scalar[k] = k >= nout && iter.is_cpu_scalar(k);
    check_storable(d, dtypes[k], spec.name.c_str());
    any_complex = any_complex || at::isComplexType(dtypes[k]);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(!any_complex || !spec.cexpr.empty(), "torch_ocl: ", spec.name,
                              " is not implemented for complex dtypes on ocl");
  bool contig = true, aligned = true;
  ArgList args;
  args.add(static_cast<cl_ulong>(n));
  if (spec.reports_errors) args.add(d.error_buf);
  for (int k = 0; k < nt; ++k) {
    if (is_scalar[k]) {
      at::ScalarType vt = dtypes[k];
      args.add_scalar(vt == at::kHalf || vt == at::kBFloat16 ? at::kFloat : vt, iter.tensor(k).item());
      continue;
    }
    int64_t expect = iter.element_size(k);
    for (int j = 0; j < ndims && contig; ++j) {
      if (iter.strides(k)[dims[j]] != expect) contig = false;
      expect *= iter.shape()[dims[j]];
    }
    Buf b = buf_ptr(iter.data_ptr(k));
    // pw_vec moves 4-element vectors of scalar types; complex operands take pw_contig.
    aligned = aligned && b.offset % (kVec * iter.element_size(k)) == 0 && !at::isComplexType(dtypes[k]);
    args.add(b.mem);
    args.add(b.offset);
  }
  for (const auto& sc : scalars) args.add_scalar(ct, sc);
  Kernels& ks = kernels_for(d, spec, nout, nt, dtypes, is_scalar, ct, static_cast<int>(scalars.size()));
  if (contig && aligned && n >= kVec) {
    enqueue(d, *ks.vec, static_cast<size_t>(std::max<int64_t>(n / ks.vec_elems, 1)), args);
    return;
  }
  if (contig) {
    enqueue(d, *ks.contig, static_cast<size_t>(n), args);
    return;
  }
  Geom g{};
  g.ndim = static_cast<cl_uint>(ndims);
  int64_t max_off = n;
  for (int j = 0; j < ndims; ++j) {
    g.size[j] = iter.shape()[dims[j]];
    for (int k = 0; k < nt; ++k) {
      if (is_scalar[k]) continue;
      int64_t st = iter.strides(k)[dims[j]] / iter.element_size(k);
      g.stride[k][j] = st;
      max_off = std::max<int64_t>(max_off, std::abs(st) * static_cast<int64_t>(g.size[j]));
    }
  }
  args.add_ref(&g, sizeof(g));
  // CPU devices: a work-item per row of the innermost dimension where rows are long enough to
  // pay for the loop (PoCL, GPTMini small8's q/k/v copies: 11 ns per element one per work-item).
  if (d.info.is_cpu() && ndims >= 2 && g.size[0] >= kMinRowsInner) {
    enqueue(d, *ks.rows, static_cast<size_t>(n / int64_t(g.size[0])), args);
    return;
  }
  const bool narrow = n < (int64_t(1) << 31) && max_off < (int64_t(1) << 31);
  enqueue(d, narrow ? *ks.strided32 : *ks.strided64, static_cast<size_t>(n), args);
}

}  // namespace

at::ScalarType compute_type_for(at::ScalarType t) {
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : t;
}

void pointwise(at::TensorIteratorBase& iter, const PointwiseSpec& spec, c10::ArrayRef<c10::Scalar> scalars,
               at::ScalarType compute) {
  if (iter.numel() == 0) return;
  Device& d = ocl_device(iter.tensor(0));
  at::ScalarType ct = compute != at::ScalarType::Undefined ? compute
                      : spec.compute != at::ScalarType::Undefined ? spec.compute
                      : iter.common_dtype();
  ct = compute_type_for(ct);
  check_storable(d, ct, spec.name.c_str());
  run_one(d, iter, spec, scalars, ct);
}

std::string cl_complex_type_name(at::ScalarType t) {
  switch (t) {
    case at::kComplexFloat: return "float2";
    case at::kComplexDouble: return "double2";
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: dtype ", t, " is not supported on the ocl device");
  }
}

void check_complex_supported(Device& d, at::ScalarType t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kComplexFloat || t == at::kComplexDouble, "torch_ocl: ", op,
                              " is not implemented for dtype ", t, " on ocl");
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kComplexDouble || d.info.fp64, "torch_ocl: ", op, " on ocl:", d.index, " (",
                              d.info.name, ") does not support complex128: the device has no cl_khr_fp64");
}

void check_storable(Device& d, at::ScalarType t, const char* op) {
  if (at::isComplexType(t)) check_complex_supported(d, t, op);
  else check_dtype_supported(d, t, op);
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
  static const PointwiseSpec spec{"copy", "a", at::ScalarType::Undefined, {}, {}, false, {}, "a"};
  // Compute in the source's value type so integer->integer copies never pass through float.
  pointwise(iter, spec, {}, src.scalar_type());
}

}  // namespace torch_ocl
