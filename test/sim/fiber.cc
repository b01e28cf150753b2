#include "test/sim/fiber.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <exception>

#include <glog/logging.h>

// GCC defines __SANITIZE_ADDRESS__ under -fsanitize=address, clang 14 only
// answers __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define ROUTESTATUS_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROUTESTATUS_SIM_ASAN 1
#endif
#endif
#ifdef ROUTESTATUS_SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace routestatus::sim {

namespace {

Fiber* current_fiber = nullptr;
// Why this large: production code (JSON decoding, glog) runs on it, and the
// sanitizers' frames are bigger.
constexpr size_t kStackSize = 1 << 20;

#ifdef ROUTESTATUS_SIM_ASAN
const void* main_stack_bottom = nullptr;
size_t main_stack_size = 0;
#endif

}  // namespace

struct Fiber::Context {
  ucontext_t fiber{};
  ucontext_t main{};
  void* stack = nullptr;
  ~Context() {
    if (stack != nullptr) munmap(stack, kStackSize);
  }
};

Fiber::Fiber(std::string name, WakeGroup* group, std::function<void()> body)
    : name_(std::move(name)), group_(group), body_(std::move(body)),
      context_(std::make_unique<Context>()) {
  wake_ = [] { return std::optional<SteadyTime>(SteadyTime{}); };
  context_->stack = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  CHECK(context_->stack != MAP_FAILED) << "fiber " << name_ << ": no memory for a stack";
  CHECK(getcontext(&context_->fiber) == 0);
  context_->fiber.uc_stack.ss_sp = context_->stack;
  context_->fiber.uc_stack.ss_size = kStackSize;
  context_->fiber.uc_link = nullptr;
  const auto self = reinterpret_cast<uintptr_t>(this);
  makecontext(&context_->fiber, reinterpret_cast<void (*)()>(&Fiber::Entry), 2,
              static_cast<unsigned>(self >> 32), static_cast<unsigned>(self & 0xffffffffu));
}

Fiber::~Fiber() { CHECK(finished_) << "fiber " << name_ << " destroyed while its body still runs"; }

void Fiber::Entry(unsigned hi, unsigned lo) {
  auto* self = reinterpret_cast<Fiber*>((static_cast<uintptr_t>(hi) << 32) | lo);
#ifdef ROUTESTATUS_SIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &main_stack_bottom, &main_stack_size);
#endif
  try {
    self->body_();
  } catch (const std::exception& e) {
    LOG(FATAL) << "sim fiber " << self->name_ << " threw: " << e.what();
  }
  self->finished_ = true;
#ifdef ROUTESTATUS_SIM_ASAN
  // nullptr: this fiber's fake stack goes away with it.
  __sanitizer_start_switch_fiber(nullptr, main_stack_bottom, main_stack_size);
#endif
  setcontext(&self->context_->main);
  LOG(FATAL) << "setcontext returned";
}

void Fiber::Resume() {
  CHECK(current_fiber == nullptr) << "Resume() is for the main context";
  CHECK(!finished_) << "fiber " << name_ << " already finished";
  current_fiber = this;
#ifdef ROUTESTATUS_SIM_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, context_->stack, kStackSize);
#endif
  CHECK(swapcontext(&context_->main, &context_->fiber) == 0);
#ifdef ROUTESTATUS_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  current_fiber = nullptr;
}

std::optional<SteadyTime> Fiber::WakeTime() const {
  if (finished_) return std::nullopt;
  return wake_();
}

Fiber* Fiber::Current() { return current_fiber; }

void Fiber::Park(WakeAt wake) {
  CHECK(current_fiber == this) << "Park() from outside fiber " << name_;
  wake_ = std::move(wake);
#ifdef ROUTESTATUS_SIM_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, main_stack_bottom, main_stack_size);
#endif
  CHECK(swapcontext(&context_->fiber, &context_->main) == 0);
#ifdef ROUTESTATUS_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, &main_stack_bottom, &main_stack_size);
#endif
}

}  // namespace routestatus::sim
