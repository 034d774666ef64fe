#include "Generator.h"
#include "Device.h"
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/Utils.h>
#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/CallOnce.h>
#include <mutex>
#include <random>
#include <vector>

namespace torch_ocl {

OclGenerator::OclGenerator(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void OclGenerator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}
void OclGenerator::set_offset(uint64_t offset) { offset_ = offset; }
uint64_t OclGenerator::get_offset() const { return offset_; }
uint64_t OclGenerator::current_seed() const { return seed_; }
uint64_t OclGenerator::seed() {
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  set_current_seed(s);
  return s;
}

void OclGenerator::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == 16,
              "torch_ocl: an ocl RNG state is a uint8 tensor of 16 bytes (seed, offset), got ",
              new_state.numel(), " elements of ", new_state.dtype().name());
  TORCH_CHECK(new_state.device().is_cpu(), "torch_ocl: RNG state must be a CPU tensor");
  const auto* p = static_cast<const uint8_t*>(new_state.data());
  uint64_t seed = 0, offset = 0;
  memcpy(&seed, p, 8);
  memcpy(&offset, p + 8, 8);
  seed_ = seed;
  offset_ = offset;
}

c10::intrusive_ptr<c10::TensorImpl> OclGenerator::get_state() const {
  auto t = at::detail::empty_cpu({16}, at::kByte, std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  auto* p = static_cast<uint8_t*>(t.data_ptr());
  memcpy(p, &seed_, 8);
  memcpy(p + 8, &offset_, 8);
  return t.getIntrusivePtr();
}

PhiloxState OclGenerator::reserve(uint64_t increment) {
  PhiloxState s{seed_, offset_};
  offset_ += increment;
  return s;
}

OclGenerator* OclGenerator::clone_impl() const {
  auto* g = new OclGenerator(device().index(), seed_);
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::mutex m;
  static std::vector<at::Generator> gens;
  std::lock_guard<std::mutex> g(m);
  if (gens.empty()) {
    int n = std::max(1, device_count());
    for (int i = 0; i < n; ++i) gens.push_back(at::make_generator<OclGenerator>(static_cast<c10::DeviceIndex>(i)));
  }
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  TORCH_CHECK_INDEX(device < static_cast<int>(gens.size()), "torch_ocl: no generator for ocl:", device);
  return gens[device];
}

at::Generator new_generator(c10::DeviceIndex device) {
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  return at::make_generator<OclGenerator>(device);
}

PhiloxState philox_reserve(const std::optional<at::Generator>& gen, c10::DeviceIndex device, uint64_t increment) {
  at::Generator g = (gen.has_value() && gen->defined()) ? *gen : default_generator(device);
  TORCH_CHECK(g.device().type() == c10::DeviceType::PrivateUse1,
              "Expected a 'ocl' device type for generator but found '", g.device().type(), "'");
  auto* impl = at::check_generator<OclGenerator>(g);
  std::lock_guard<std::mutex> lock(g.mutex());
  return impl->reserve(increment);
}

}  // namespace torch_ocl
