#include "kubeclient/list_stream.h"

#include <cctype>

#include <nlohmann/json.hpp>

namespace routestatus::kubeclient {
namespace {

constexpr size_t kMaxKeyBytes = 256;
constexpr size_t kMaxMetadataBytes = 64 * 1024;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

ListStreamScanner::ListStreamScanner(ItemFn on_item, size_t max_item_bytes)
    : on_item_(std::move(on_item)), max_item_bytes_(max_item_bytes) {}

bool ListStreamScanner::Fail(std::string why) {
  if (error_.empty()) error_ = "list response: " + why;
  return false;
}

bool ListStreamScanner::Feed(std::string_view bytes) {
  if (!error_.empty()) return false;
  for (char c : bytes) {
    if (!Consume(c)) return false;
  }
  return true;
}

bool ListStreamScanner::Finish() {
  if (!error_.empty()) return false;
  if (state_ != State::kDone) return Fail("ended before its closing brace");
  return true;
}

bool ListStreamScanner::Consume(char c) {
  if (state_ == State::kDone) return IsSpace(c) || Fail("text after the list object");
  if (capturing_item_) {
    item_.push_back(c);
    if (item_.size() > max_item_bytes_) {
      return Fail("an item larger than " + std::to_string(max_item_bytes_) + " bytes");
    }
  }
  if (capturing_meta_) {
    meta_.push_back(c);
    if (meta_.size() > kMaxMetadataBytes) return Fail("metadata larger than 64 KiB");
  }
  if (in_string_) {
    if (escape_) {
      escape_ = false;
    } else if (c == '\\') {
      escape_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (state_ == State::kInKey) state_ = State::kExpectColon;
      return true;
    }
    if (state_ == State::kInKey) {
      key_.push_back(c);
      if (key_.size() > kMaxKeyBytes) return Fail("a member name longer than 256 bytes");
    }
    return true;
  }
  switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 1 && state_ == State::kExpectKey) {
        state_ = State::kInKey;
        key_.clear();
      } else if (depth_ == 1 && state_ == State::kExpectValue) {
        state_ = State::kInValue;
      }
      return true;
    case '{':
    case '[':
      return OpenContainer(c);
    case '}':
    case ']':
      return CloseContainer(c);
    case ':':
      if (depth_ == 1 && state_ == State::kExpectColon) state_ = State::kExpectValue;
      return true;
    case ',':
      if (depth_ == 1) state_ = State::kExpectKey;
      return true;
    default:
      if (IsSpace(c)) return true;
      if (depth_ == 0) return Fail("not a JSON object");
      if (depth_ == 1 && state_ == State::kExpectValue) state_ = State::kInValue;
      if (depth_ == 2 && in_items_) return Fail("an element of items is not an object");
      return true;
  }
}

bool ListStreamScanner::OpenContainer(char c) {
  if (depth_ == 0) {
    // Why: a BOM or other bytes before the object are not a list.
    if (c != '{' || state_ != State::kStart) return Fail("not a JSON object");
    depth_ = 1;
    state_ = State::kExpectKey;
    return true;
  }
  if (depth_ == 1 && state_ == State::kExpectValue) {
    state_ = State::kInValue;
    if (key_ == "items") {
      if (c != '[') return Fail("items is not an array");
      in_items_ = true;
    } else if (key_ == "metadata" && c == '{') {
      capturing_meta_ = true;
      meta_ = "{";
    }
  } else if (depth_ == 2 && in_items_) {
    if (c != '{') return Fail("an element of items is not an object");
    capturing_item_ = true;
    item_ = "{";
  }
  ++depth_;
  return true;
}

bool ListStreamScanner::CloseContainer(char c) {
  if (depth_ == 0) return Fail("unbalanced brackets");
  --depth_;
  if (capturing_item_ && depth_ == 2) {
    capturing_item_ = false;
    on_item_(item_);
    item_.clear();
  }
  if (capturing_meta_ && depth_ == 1) {
    capturing_meta_ = false;
    if (!ParseMetadata()) return false;
  }
  if (depth_ == 1 && c == ']' && in_items_) in_items_ = false;
  if (depth_ == 0) {
    if (c != '}') return Fail("unbalanced brackets");
    state_ = State::kDone;
  }
  return true;
}

bool ListStreamScanner::ParseMetadata() {
  nlohmann::json m = nlohmann::json::parse(meta_, nullptr, /*allow_exceptions=*/false);
  meta_.clear();
  if (!m.is_object()) return Fail("metadata is not a JSON object");
  auto text = [&m](const char* key) {
    auto it = m.find(key);
    return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  resource_version_ = text("resourceVersion");
  continue_token_ = text("continue");
  return true;
}

}  // namespace routestatus::kubeclient
