#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

namespace routestatus::kubeclient {

// A string in 16 bytes, for fields of objects the cache keeps by the
// hundred thousand (Route, ObjectMeta). Up to 15 characters are stored in
// the object itself; a longer text gets one heap block of exactly its size.
// Why not std::string: it takes 32 bytes whatever its length, and a cached
// Route has ten of them (160 bytes per route, 16 MB at 100,000 routes).
// Reads go through std::string_view (implicit); assignment takes anything
// convertible to one. Always NUL-terminated (c_str()). Value type;
// thread-compatible.
class CompactString {
 public:
  static constexpr size_t kInlineCapacity = 15;

  CompactString() noexcept { SetInlineSize(0); }
  CompactString(std::string_view text) { Init(text); }  // NOLINT: implicit by design
  CompactString(const char* text) { Init(std::string_view(text)); }  // NOLINT
  CompactString(const std::string& text) { Init(text); }  // NOLINT
  CompactString(const CompactString& other) { Init(other.view()); }
  CompactString(CompactString&& other) noexcept : rep_(other.rep_) { other.SetInlineSize(0); }
  ~CompactString() { Release(); }

  CompactString& operator=(const CompactString& other) {
    if (this != &other) Assign(other.view());
    return *this;
  }
  CompactString& operator=(CompactString&& other) noexcept {
    if (this != &other) {
      Release();
      rep_ = other.rep_;
      other.SetInlineSize(0);
    }
    return *this;
  }
  CompactString& operator=(std::string_view text) {
    Assign(text);
    return *this;
  }
  CompactString& operator=(const char* text) { return *this = std::string_view(text); }
  CompactString& operator=(const std::string& text) { return *this = std::string_view(text); }

  const char* data() const { return IsHeap() ? rep_.heap.ptr : rep_.inline_chars; }
  const char* c_str() const { return data(); }
  size_t size() const {
    return IsHeap() ? rep_.heap.size
                    : kInlineCapacity - static_cast<unsigned char>(rep_.inline_chars[15]);
  }
  size_t length() const { return size(); }
  bool empty() const { return size() == 0; }
  void clear() { Assign(std::string_view()); }
  std::string_view view() const { return std::string_view(data(), size()); }
  std::string str() const { return std::string(data(), size()); }
  char operator[](size_t i) const { return data()[i]; }
  // std::string's read-only helpers the replaced fields' readers use.
  static constexpr size_t npos = std::string_view::npos;
  const char* begin() const { return data(); }
  const char* end() const { return data() + size(); }
  size_t find(std::string_view s, size_t pos = 0) const { return view().find(s, pos); }
  size_t find(char c, size_t pos = 0) const { return view().find(c, pos); }
  size_t rfind(std::string_view s, size_t pos = npos) const { return view().rfind(s, pos); }
  size_t rfind(char c, size_t pos = npos) const { return view().rfind(c, pos); }
  std::string substr(size_t pos, size_t n = npos) const { return std::string(view().substr(pos, n)); }

  operator std::string_view() const { return view(); }  // NOLINT: implicit by design
  // Why implicit: the fields this type replaced were std::string, and ~100
  // call sites pass them on as one. Each such use copies the text.
  operator std::string() const { return str(); }  // NOLINT

  friend bool operator==(const CompactString& a, const CompactString& b) {
    return a.view() == b.view();
  }
  friend bool operator!=(const CompactString& a, const CompactString& b) { return !(a == b); }
  friend bool operator<(const CompactString& a, const CompactString& b) {
    return a.view() < b.view();
  }
  friend std::ostream& operator<<(std::ostream& out, const CompactString& s) {
    return out << s.view();
  }

  // Comparisons and concatenation with anything convertible to string_view
  // (std::string, const char*, string_view). Hidden friend templates: found
  // only when a CompactString is an operand, and preferred over the
  // converting constructors (no ambiguity with the CompactString pair).
  template <typename T>
  using EnableIfStringLike =
      std::enable_if_t<std::is_convertible_v<const T&, std::string_view> &&
                           !std::is_same_v<std::decay_t<T>, CompactString>,
                       int>;

  template <typename T, EnableIfStringLike<T> = 0>
  friend bool operator==(const CompactString& a, const T& b) {
    return a.view() == std::string_view(b);
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend bool operator==(const T& a, const CompactString& b) {
    return std::string_view(a) == b.view();
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend bool operator!=(const CompactString& a, const T& b) {
    return !(a == b);
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend bool operator!=(const T& a, const CompactString& b) {
    return !(a == b);
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend bool operator<(const CompactString& a, const T& b) {
    return a.view() < std::string_view(b);
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend bool operator<(const T& a, const CompactString& b) {
    return std::string_view(a) < b.view();
  }
  friend std::string operator+(const CompactString& a, const CompactString& b) {
    return Concat(a.view(), b.view());
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend std::string operator+(const CompactString& a, const T& b) {
    return Concat(a.view(), std::string_view(b));
  }
  template <typename T, EnableIfStringLike<T> = 0>
  friend std::string operator+(const T& a, const CompactString& b) {
    return Concat(std::string_view(a), b.view());
  }

 private:
  static std::string Concat(std::string_view a, std::string_view b) {
    std::string out;
    out.reserve(a.size() + b.size());
    out.append(a).append(b);
    return out;
  }

  // Heap mode marker in the last byte (inline mode keeps 15 - size there,
  // so a 15-character inline text ends with its NUL terminator).
  static constexpr unsigned char kHeapTag = 0x80;

  struct Heap {
    char* ptr;
    uint32_t size;
    char pad[3];
    unsigned char tag;
  };
  union Rep {
    char inline_chars[16];
    Heap heap;
  };

  bool IsHeap() const { return static_cast<unsigned char>(rep_.inline_chars[15]) == kHeapTag; }
  void SetInlineSize(size_t n) {
    rep_.inline_chars[n] = '\0';
    rep_.inline_chars[15] = static_cast<char>(kInlineCapacity - n);
  }
  void Init(std::string_view text);
  void Assign(std::string_view text);
  void Release() noexcept;

  Rep rep_;
};
static_assert(sizeof(CompactString) == 16, "CompactString must stay 16 bytes");

}  // namespace routestatus::kubeclient

template <>
struct std::hash<routestatus::kubeclient::CompactString> {
  size_t operator()(const routestatus::kubeclient::CompactString& s) const noexcept {
    return std::hash<std::string_view>()(s.view());
  }
};
