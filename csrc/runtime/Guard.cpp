// DeviceGuardImplInterface for PrivateUse1: the current device is per thread (like CUDA);
// each device has exactly one stream, its in-order queue. Events are OpenCL markers.
#include "Device.h"
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

namespace torch_ocl {
namespace {

using c10::Device;
using c10::DeviceIndex;
using c10::Stream;

struct OclGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;
  c10::DeviceType type() const override { return kType; }
  Device exchangeDevice(Device d) const override {
    Device old = getDevice();
    if (d.index() >= 0 && d.index() != old.index()) set_current_device(d.index());
    return old;
  }
  Device getDevice() const override { return Device(kType, static_cast<DeviceIndex>(current_device())); }
  void setDevice(Device d) const override {
    if (d.index() >= 0) set_current_device(d.index());
  }
  void uncheckedSetDevice(Device d) const noexcept override {
    try {
      if (d.index() >= 0) set_current_device(d.index());
    } catch (...) {
    }
  }
  Stream getStream(Device d) const noexcept override { return Stream(Stream::DEFAULT, normalize(d)); }
  Stream getDefaultStream(Device d) const override { return Stream(Stream::DEFAULT, normalize(d)); }
  Stream getNewStream(Device d, int) const override { return Stream(Stream::DEFAULT, normalize(d)); }
  Stream exchangeStream(Stream s) const noexcept override { return Stream(Stream::DEFAULT, s.device()); }
  DeviceIndex deviceCount() const noexcept override { return static_cast<DeviceIndex>(device_count()); }

  void record(void** event, const Stream& stream, const DeviceIndex, const c10::EventFlag) const override {
    auto& d = get_device(stream.device_index());
    if (*event) clReleaseEvent(static_cast<cl_event>(*event));
    cl_event ev = nullptr;
    QueueLock g(d);
    OCL_CHECK(clEnqueueMarkerWithWaitList(d.queue, 0, nullptr, &ev), "recording an event");
    *event = ev;
  }
  void block(void* event, const Stream& stream) const override {
    if (!event) return;
    // One in-order queue per device: work on the same device is already ordered after the
    // event. An event from another device (another context) is waited for on the host.
    cl_context ctx = nullptr;
    clGetEventInfo(static_cast<cl_event>(event), CL_EVENT_CONTEXT, sizeof(ctx), &ctx, nullptr);
    if (ctx != get_device(stream.device_index()).ctx) {
      cl_event ev = static_cast<cl_event>(event);
      OCL_CHECK(clWaitForEvents(1, &ev), "waiting for an event of another device");
    }
  }
  bool queryEvent(void* event) const override {
    if (!event) return true;
    cl_int st = CL_COMPLETE;
    OCL_CHECK(clGetEventInfo(static_cast<cl_event>(event), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr),
              "querying an event");
    return st == CL_COMPLETE;
  }
  void synchronizeEvent(void* event) const override {
    if (!event) return;
    cl_event ev = static_cast<cl_event>(event);
    OCL_CHECK(clWaitForEvents(1, &ev), "waiting for an event");
  }
  void destroyEvent(void* event, const DeviceIndex) const noexcept override {
    if (event) clReleaseEvent(static_cast<cl_event>(event));
  }
  double elapsedTime(void* event1, void* event2, const DeviceIndex) const override {
    TORCH_CHECK(event1 && event2, "torch_ocl: both events must be recorded before elapsed_time()");
    cl_event evs[2] = {static_cast<cl_event>(event1), static_cast<cl_event>(event2)};
    OCL_CHECK(clWaitForEvents(2, evs), "waiting for events to time them");
    cl_ulong t[2] = {0, 0};
    for (int i = 0; i < 2; ++i)
      OCL_CHECK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof(cl_ulong), &t[i], nullptr),
                "reading an event's timestamp");
    return (static_cast<double>(t[1]) - static_cast<double>(t[0])) / 1e6;  // ns -> ms
  }
  bool queryStream(const Stream& stream) const override {
    // Enqueue a marker and ask whether it completed: true only if the queue drained.
    auto& d = get_device(stream.device_index());
    cl_event ev = nullptr;
    {
      QueueLock g(d);
      OCL_CHECK(clEnqueueMarkerWithWaitList(d.queue, 0, nullptr, &ev), "querying a stream");
      clFlush(d.queue);
    }
    cl_int st = CL_COMPLETE;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
    clReleaseEvent(ev);
    return st == CL_COMPLETE;
  }
  void synchronizeStream(const Stream& stream) const override { synchronize(stream.device_index()); }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
  void synchronizeDevice(const DeviceIndex device_index) const override {
    synchronize(device_index < 0 ? current_device() : device_index);
  }
#endif

 private:
  static Device normalize(Device d) {
    return d.index() < 0 ? Device(kType, static_cast<DeviceIndex>(current_device())) : d;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, OclGuardImpl);

}  // namespace
}  // namespace torch_ocl
