// Python bindings (torch_ocl._C): the only translation unit that includes
// torch/extension.h. Everything here is thin glue over csrc/runtime.
#include <torch/csrc/Generator.h>
#include <torch/extension.h>
#include "../runtime/Allocator.h"
#include "../runtime/Device.h"
#include "../runtime/Generator.h"
#include "../runtime/Launch.h"
#include "../runtime/Programs.h"
#include "../runtime/Tuning.h"
#include "../ops/gemm.h"

namespace torch_ocl {
std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();
}

namespace py = pybind11;
using namespace torch_ocl;

namespace {
py::dict properties(int idx) {
  const DeviceInfo& in = peek_device(idx).info;
  py::dict d;
  d["name"] = in.name;
  d["vendor"] = in.vendor;
  d["driver_version"] = in.driver_version;
  d["opencl_version"] = in.opencl_version;
  d["platform_name"] = in.platform_name;
  d["platform_version"] = in.platform_version;
  d["type"] = (in.type & CL_DEVICE_TYPE_GPU) ? "gpu" : (in.type & CL_DEVICE_TYPE_CPU) ? "cpu"
              : (in.type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator" : "other";
  d["compute_units"] = in.compute_units;
  d["global_mem_size"] = in.global_mem;
  d["local_mem_size"] = in.local_mem;
  d["max_alloc_size"] = in.max_alloc;
  d["max_work_group_size"] = in.max_work_group;
  d["fp16"] = in.fp16;
  d["fp64"] = in.fp64;
  d["extensions"] = in.extensions;
  return d;
}

py::dict stats_dict(int idx) {
  MemoryStats s = memory_stats(idx);
  py::dict d;
  d["allocated_bytes.all.current"] = s.allocated;
  d["allocated_bytes.all.peak"] = s.allocated_peak;
  d["reserved_bytes.all.current"] = s.reserved;
  d["reserved_bytes.all.peak"] = s.reserved_peak;
  d["requested_bytes.all.current"] = s.requested;
  d["requested_bytes.all.peak"] = s.requested_peak;
  d["active.all.current"] = s.active_blocks;
  d["segment.all.current"] = s.num_segments;
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_allocs"] = s.num_allocs;
  d["num_frees"] = s.num_frees;
  d["num_device_alloc"] = s.num_device_allocs;
  d["num_device_free"] = s.num_device_frees;
  return d;
}
}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_ocl native runtime";
  m.def("_device_count", &device_count);
  m.def("_unavailable_reason", &unavailable_reason);
  m.def("_current_device", &current_device);
  m.def("_set_device", &set_current_device);
  m.def("_init_device", [](int idx) { get_device(idx); });
  m.def("_is_initialized", &any_initialized);
  m.def("_initialized_devices", &initialized_devices);
  m.def("_in_bad_fork", &in_bad_fork);
  m.def("_synchronize", [](int idx) {
    py::gil_scoped_release no_gil;
    synchronize(idx);
  });
  m.def("_get_device_properties", &properties);
  m.def("_memory_stats", &stats_dict);
  m.def("_reset_peak_memory_stats", &reset_peak_stats);
  m.def("_reset_accumulated_memory_stats", &reset_accumulated_stats);
  m.def("_empty_cache", [](int idx) { empty_cache(idx); }, py::arg("device") = -1);
  m.def("_fallback_counts", &fallback_counts);
  m.def("_reset_fallback_counts", &reset_fallback_counts);
  m.def("_default_generator", [](int idx) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator(static_cast<c10::DeviceIndex>(idx))));
  });
  m.def("_program_cache_stats", []() {
    ProgramStats s = program_stats();
    py::dict d;
    d["built_from_source"] = s.built_from_source;
    d["loaded_from_disk"] = s.loaded_from_disk;
    d["disk_rejected"] = s.disk_rejected;
    d["disk_written"] = s.disk_written;
    return d;
  });
  m.def("_launch_counts", &launch_counts);
  m.def("_reset_launch_counts", &reset_kernel_stats);
  m.def("_kernel_times", &kernel_times);
  m.def("_kernel_span_ms", &kernel_span_ms);
  // Per-device tuning (csrc/runtime/Tuning.h; used by torch_ocl/tune.py and the tests).
  m.def("_tuning_dir", &tuning::directory);
  m.def("_set_tuning_dir", &tuning::set_directory);
  m.def("_tuning_file", [](int idx) { return tuning::file_path(peek_device(idx)); });
  m.def("_tuning_lookup", [](int idx, const std::string& key) { return tuning::lookup(get_device(idx), key); });
  m.def("_tuning_set", [](int idx, const std::string& key, const std::string& value) {
    tuning::set(get_device(idx), key, value);
  });
  m.def("_tuning_reload", &tuning::reload);
  m.def("_gemm_config", [](int idx, py::object dtype, int64_t B, int64_t M, int64_t N) {
    return gemm_config_for(idx, torch::python::detail::py_object_to_dtype(dtype), B, M, N);
  });
}
