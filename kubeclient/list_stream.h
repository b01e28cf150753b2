#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace routestatus::kubeclient {

// Splits a list response body ({"metadata":{..},"items":[{..},..]}, the
// members in any order) into its items while it arrives, holding only the
// item being read. Why: a list served from kube-apiserver's watch cache
// (resourceVersion "0") ignores the page size and answers 100,000 routes
// in one body of ~150 MB, more than a replica's memory limit; item by item
// it costs one route's text. Not a full JSON validator: each item is
// handed over as text for its decoder to check. Not thread-safe.
class ListStreamScanner {
 public:
  using ItemFn = std::function<void(std::string_view item)>;

  // `on_item` gets each element of "items", its exact text; an item longer
  // than `max_item_bytes` is an error.
  ListStreamScanner(ItemFn on_item, size_t max_item_bytes);

  // Scans the next bytes of the body. false once the text is not a list
  // response (sticky; error() says why).
  bool Feed(std::string_view bytes);
  // At the end of the body: false unless one whole top-level object was
  // read.
  bool Finish();

  const std::string& resource_version() const { return resource_version_; }
  const std::string& continue_token() const { return continue_token_; }
  const std::string& error() const { return error_; }

 private:
  enum class State { kStart, kExpectKey, kInKey, kExpectColon, kExpectValue, kInValue, kDone };
  bool Fail(std::string why);
  bool Consume(char c);
  bool OpenContainer(char c);
  bool CloseContainer(char c);
  bool ParseMetadata();

  ItemFn on_item_;
  const size_t max_item_bytes_;
  State state_ = State::kStart;
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool in_items_ = false;         // inside the "items" array
  bool capturing_item_ = false;   // item_ holds an element being read
  bool capturing_meta_ = false;   // meta_ holds "metadata" being read
  std::string key_;               // the top-level member being read
  std::string item_;
  std::string meta_;
  std::string resource_version_;
  std::string continue_token_;
  std::string error_;
};

}  // namespace routestatus::kubeclient
