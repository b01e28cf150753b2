#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace routestatus::kubeclient {

// An object's metadata.labels: a map from key to value kept as one sorted
// vector. Why not std::map: every map node costs ~100 bytes on top of its
// strings, which for 4 labels on each of 100,000 cached routes is ~17 MB.
// Lookups are binary searches; inserts are O(n), fine for the handful of
// labels an object carries. Value type; thread-compatible.
class Labels {
 public:
  using value_type = std::pair<std::string, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;

  Labels() = default;
  // Later duplicates of a key replace earlier ones.
  Labels(std::initializer_list<value_type> items);

  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

  // The entry for `key`, or end().
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  // The value for `key`; throws std::out_of_range when absent (as std::map).
  const std::string& at(std::string_view key) const;
  // The value for `key`, inserting "" when absent.
  std::string& operator[](std::string_view key);
  // Sets `key` to `value`.
  void insert_or_assign(std::string key, std::string value);
  // Removes `key`; returns how many entries were removed (0 or 1).
  size_t erase(std::string_view key);
  void clear() { items_.clear(); }
  // Releases spare capacity (the decoder calls it once per object).
  void shrink_to_fit() { items_.shrink_to_fit(); }

  friend bool operator==(const Labels& a, const Labels& b) { return a.items_ == b.items_; }
  friend bool operator!=(const Labels& a, const Labels& b) { return a.items_ != b.items_; }

 private:
  std::vector<value_type>::iterator LowerBound(std::string_view key);

  std::vector<value_type> items_;  // sorted by key, keys unique
};

}  // namespace routestatus::kubeclient
