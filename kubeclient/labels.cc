#include "kubeclient/labels.h"

#include <algorithm>
#include <stdexcept>

namespace routestatus::kubeclient {

Labels::Labels(std::initializer_list<value_type> items) {
  for (const auto& [key, value] : items) insert_or_assign(key, value);
}

std::vector<Labels::value_type>::iterator Labels::LowerBound(std::string_view key) {
  return std::lower_bound(items_.begin(), items_.end(), key,
                          [](const value_type& item, std::string_view k) { return item.first < k; });
}

Labels::const_iterator Labels::find(std::string_view key) const {
  auto it = const_cast<Labels*>(this)->LowerBound(key);
  if (it == items_.end() || it->first != key) return items_.end();
  return it;
}

const std::string& Labels::at(std::string_view key) const {
  auto it = find(key);
  if (it == end()) throw std::out_of_range("no label " + std::string(key));
  return it->second;
}

std::string& Labels::operator[](std::string_view key) {
  auto it = LowerBound(key);
  if (it == items_.end() || it->first != key) it = items_.emplace(it, std::string(key), std::string());
  return it->second;
}

void Labels::insert_or_assign(std::string key, std::string value) {
  auto it = LowerBound(key);
  if (it != items_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    items_.emplace(it, std::move(key), std::move(value));
  }
}

size_t Labels::erase(std::string_view key) {
  auto it = LowerBound(key);
  if (it == items_.end() || it->first != key) return 0;
  items_.erase(it);
  return 1;
}

}  // namespace routestatus::kubeclient
