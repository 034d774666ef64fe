// The device random generator: Philox4x32-10 with (seed, offset) state, one default per
// device. A random kernel reserves `increment` counter blocks under the generator's mutex
// and derives every element from (seed, offset + block), so results do not depend on the
// launch geometry and never involve the CPU generator. State is 16 bytes: seed, offset.
#pragma once
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>
#include <optional>

namespace torch_ocl {

struct PhiloxState {
  uint64_t seed;
  uint64_t offset;
};

class OclGenerator : public c10::GeneratorImpl {
 public:
  explicit OclGenerator(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // Reserves `increment` Philox blocks (4 random words each) and returns the state to use.
  PhiloxState reserve(uint64_t increment);

 private:
  OclGenerator* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);
// The generator to use for an op on `device`: `gen` if given (checked to be an ocl
// generator), else the device's default.
PhiloxState philox_reserve(const std::optional<at::Generator>& gen, c10::DeviceIndex device, uint64_t increment);

}  // namespace torch_ocl
