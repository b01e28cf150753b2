#include "kubeclient/compact_string.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace routestatus::kubeclient {

void CompactString::Init(std::string_view text) {
  if (text.size() <= kInlineCapacity) {
    if (!text.empty()) std::memcpy(rep_.inline_chars, text.data(), text.size());
    SetInlineSize(text.size());
    return;
  }
  if (text.size() > UINT32_MAX) throw std::length_error("CompactString: text over 4 GiB");
  // Why malloc of the exact size: a heap text is never appended to, so no
  // spare capacity is kept.
  char* ptr = static_cast<char*>(std::malloc(text.size() + 1));
  if (ptr == nullptr) throw std::bad_alloc();
  std::memcpy(ptr, text.data(), text.size());
  ptr[text.size()] = '\0';
  rep_.heap.ptr = ptr;
  rep_.heap.size = static_cast<uint32_t>(text.size());
  rep_.heap.tag = kHeapTag;
}

void CompactString::Assign(std::string_view text) {
  // Why a copy first: `text` may point into this string's own heap block.
  CompactString fresh(text);
  *this = std::move(fresh);
}

void CompactString::Release() noexcept {
  if (IsHeap()) std::free(rep_.heap.ptr);
  SetInlineSize(0);
}

}  // namespace routestatus::kubeclient
