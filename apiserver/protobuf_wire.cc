#include "apiserver/protobuf_wire.h"

namespace routestatus::apiserver {

namespace {

constexpr uint32_t kMaxFieldNumber = (1u << 29) - 1;

}  // namespace

WireReader::WireReader(std::string_view data, int depth) : data_(data), depth_(depth) {
  if (depth_ > kMaxDepth) {
    error_ = "protobuf: messages nested deeper than " + std::to_string(kMaxDepth) + " levels";
  }
}

WireReader WireReader::Nested(std::string_view bytes) const {
  return WireReader(bytes, depth_ + 1);
}

void WireReader::Fail(const std::string& message) {
  if (error_.empty()) error_ = message;
}

bool WireReader::ReadVarint(uint64_t* out) {
  uint64_t value = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos_ >= data_.size()) {
      Fail("protobuf: truncated varint at offset " + std::to_string(pos_));
      return false;
    }
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    // Why: the 10th byte holds bit 63 only; anything more overflows 64 bits.
    if (i == 9 && b > 1) {
      Fail("protobuf: varint overflows 64 bits at offset " + std::to_string(pos_ - 1));
      return false;
    }
    value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      *out = value;
      return true;
    }
  }
  Fail("protobuf: varint longer than 10 bytes at offset " + std::to_string(pos_));
  return false;
}

bool WireReader::ReadTag(uint32_t* number, WireType* type) {
  size_t at = pos_;
  uint64_t tag = 0;
  if (!ReadVarint(&tag)) return false;
  uint64_t n = tag >> 3;
  uint8_t t = static_cast<uint8_t>(tag & 7);
  if (n == 0 || n > kMaxFieldNumber) {
    Fail("protobuf: invalid field number " + std::to_string(n) + " at offset " +
         std::to_string(at));
    return false;
  }
  if (t > 5) {
    Fail("protobuf: invalid wire type " + std::to_string(t) + " at offset " + std::to_string(at));
    return false;
  }
  *number = static_cast<uint32_t>(n);
  *type = static_cast<WireType>(t);
  return true;
}

bool WireReader::Next(WireField* field) {
  while (ok()) {
    if (pos_ >= data_.size()) return false;
    size_t at = pos_;
    uint32_t number = 0;
    WireType type = WireType::kVarint;
    if (!ReadTag(&number, &type)) return false;
    WireField f;
    f.number = number;
    f.type = type;
    switch (type) {
      case WireType::kVarint:
        if (!ReadVarint(&f.value)) return false;
        break;
      case WireType::kFixed64:
      case WireType::kFixed32: {
        size_t n = type == WireType::kFixed64 ? 8 : 4;
        if (data_.size() - pos_ < n) {
          Fail("protobuf: truncated fixed-width field " + std::to_string(number) +
               " at offset " + std::to_string(at));
          return false;
        }
        for (size_t i = 0; i < n; ++i) {
          f.value |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
        }
        pos_ += n;
        break;
      }
      case WireType::kLengthDelimited: {
        uint64_t len = 0;
        if (!ReadVarint(&len)) return false;
        if (len > data_.size() - pos_) {
          Fail("protobuf: field " + std::to_string(number) + " at offset " + std::to_string(at) +
               " claims " + std::to_string(len) + " bytes but only " +
               std::to_string(data_.size() - pos_) + " remain");
          return false;
        }
        f.bytes = data_.substr(pos_, static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
        break;
      }
      case WireType::kStartGroup:
        if (!SkipGroup(number)) return false;
        continue;  // groups are never returned
      case WireType::kEndGroup:
        Fail("protobuf: end of group " + std::to_string(number) + " without a start at offset " +
             std::to_string(at));
        return false;
    }
    *field = f;
    return true;
  }
  return false;
}

bool WireReader::SkipGroup(uint32_t number) {
  // Why: an explicit stack of open group numbers, bounded by kMaxDepth, so
  // hostile nesting costs neither recursion nor unbounded memory.
  uint32_t open[kMaxDepth + 1];
  int top = 0;
  if (depth_ + 1 > kMaxDepth) {
    Fail("protobuf: groups nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return false;
  }
  open[top++] = number;
  while (top > 0) {
    if (pos_ >= data_.size()) {
      Fail("protobuf: truncated group " + std::to_string(open[top - 1]));
      return false;
    }
    size_t at = pos_;
    uint32_t n = 0;
    WireType type = WireType::kVarint;
    if (!ReadTag(&n, &type)) return false;
    uint64_t ignored = 0;
    switch (type) {
      case WireType::kVarint:
        if (!ReadVarint(&ignored)) return false;
        break;
      case WireType::kFixed64:
      case WireType::kFixed32: {
        size_t len = type == WireType::kFixed64 ? 8 : 4;
        if (data_.size() - pos_ < len) {
          Fail("protobuf: truncated fixed-width field at offset " + std::to_string(at));
          return false;
        }
        pos_ += len;
        break;
      }
      case WireType::kLengthDelimited: {
        uint64_t len = 0;
        if (!ReadVarint(&len)) return false;
        if (len > data_.size() - pos_) {
          Fail("protobuf: truncated length-delimited field at offset " + std::to_string(at));
          return false;
        }
        pos_ += static_cast<size_t>(len);
        break;
      }
      case WireType::kStartGroup:
        if (depth_ + top + 1 > kMaxDepth) {
          Fail("protobuf: groups nested deeper than " + std::to_string(kMaxDepth) + " levels");
          return false;
        }
        open[top++] = n;
        break;
      case WireType::kEndGroup:
        if (open[top - 1] != n) {
          Fail("protobuf: end of group " + std::to_string(n) + " inside group " +
               std::to_string(open[top - 1]) + " at offset " + std::to_string(at));
          return false;
        }
        --top;
        break;
    }
  }
  return true;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    uint8_t c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;
    uint32_t cp;
    uint32_t min;
    if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (s.size() - i - 1 < n) return false;
    for (size_t k = 1; k <= n; ++k) {
      uint8_t cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace routestatus::apiserver
