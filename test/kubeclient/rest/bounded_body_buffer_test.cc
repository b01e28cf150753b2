// BoundedBodyBuffer: a write that takes the unread bytes past the capacity
// does not complete until the reader has brought them down to half of it.
#include "kubeclient/rest/bounded_body_buffer.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace routestatus::kubeclient::rest {
namespace {

// Reads `n` bytes (they are there: never waits).
std::string Read(BoundedBodyBuffer& buffer, size_t n) {
  std::string out(n, '\0');
  const size_t got = buffer.getn(reinterpret_cast<uint8_t*>(out.data()), n).get();
  out.resize(got);
  buffer.Consumed(got);
  return out;
}

pplx::task<size_t> Write(BoundedBodyBuffer& buffer, const std::string& bytes) {
  return buffer.putn_nocopy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

TEST(BoundedBodyBufferTest, WritesWithinTheCapacityCompleteAtOnce) {
  auto buffer = std::make_shared<BoundedBodyBuffer>(100);
  const std::string a(60, 'a'), b(40, 'b');
  auto first = Write(*buffer, a);
  auto second = Write(*buffer, b);
  EXPECT_TRUE(first.is_done());
  EXPECT_TRUE(second.is_done());
  EXPECT_EQ(second.get(), 40u);
  EXPECT_FALSE(buffer->holding());
  EXPECT_EQ(buffer->pending(), 100u);
}

TEST(BoundedBodyBufferTest, WriteBeyondTheCapacityWaitsUntilReadDownToHalf) {
  auto buffer = std::make_shared<BoundedBodyBuffer>(100);
  const std::string a(60, 'a'), b(60, 'b');
  ASSERT_TRUE(Write(*buffer, a).is_done());
  auto held = Write(*buffer, b);
  EXPECT_FALSE(held.is_done()) << "120 unread bytes > 100";
  EXPECT_TRUE(buffer->holding());
  EXPECT_EQ(Read(*buffer, 30), std::string(30, 'a'));
  EXPECT_FALSE(held.is_done()) << "90 unread bytes > half of 100";
  EXPECT_EQ(Read(*buffer, 50), std::string(30, 'a') + std::string(20, 'b'));
  held.wait();  // 40 unread: it goes on
  EXPECT_EQ(held.get(), 60u);
  EXPECT_FALSE(buffer->holding());
  EXPECT_EQ(Read(*buffer, 40), std::string(40, 'b')) << "every byte, in order";
}

TEST(BoundedBodyBufferTest, ReleaseLetsAHeldWriteGoOnAndHoldsNoMore) {
  auto buffer = std::make_shared<BoundedBodyBuffer>(10);
  auto held = Write(*buffer, std::string(20, 'x'));
  EXPECT_FALSE(held.is_done());
  buffer->Release();
  held.wait();
  EXPECT_TRUE(Write(*buffer, std::string(20, 'y')).is_done());
  EXPECT_FALSE(buffer->holding());
}

TEST(BoundedBodyBufferTest, ReaderSeesTheEndOnceClosed) {
  auto buffer = std::make_shared<BoundedBodyBuffer>(100);
  ASSERT_TRUE(Write(*buffer, "last").is_done());
  buffer->close(std::ios_base::out).wait();
  EXPECT_EQ(Read(*buffer, 100), "last");
  EXPECT_EQ(Read(*buffer, 100), "");
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
