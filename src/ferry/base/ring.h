// Ring<T>: a FIFO of trivially copyable values in one growable circular buffer. Unlike
// std::deque, a queue that is filled and drained over and over allocates nothing once it has
// grown to its largest size (a deque allocates a 512-byte block for every few entries it takes
// and frees one for every few it gives back, which costs most when, as in the router's book of
// positions, one thread pushes and another pops).
//
//   Ring<int64_t> r;
//   r.push_back(7);
//   int64_t first = r.front();  // r[0]
//   r.pop_front();
//
// Capacity doubles when full and never shrinks; clear() keeps it. Indices are from the front.
//
// Thread-safety: none (guard it like a std::deque).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "ferry/base/check.h"

namespace ferry {

template <typename T>
class Ring {
  static_assert(std::is_trivially_copyable_v<T>, "Ring holds trivially copyable values");

 public:
  Ring() = default;
  Ring(Ring&& other) noexcept { *this = std::move(other); }
  Ring& operator=(Ring&& other) noexcept {
    data_ = std::move(other.data_);
    capacity_ = std::exchange(other.capacity_, 0);
    head_ = std::exchange(other.head_, 0);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

  T& operator[](size_t i) { return data_[Slot(i)]; }
  const T& operator[](size_t i) const { return data_[Slot(i)]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == capacity_) {
      Grow();
    }
    data_[Slot(size_)] = value;
    ++size_;
  }

  void pop_front() {
    FERRY_CHECK_MSG(size_ > 0, "Ring::pop_front on an empty ring");
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    --size_;
  }

  void clear() {
    head_ = 0;
    size_ = 0;
  }

  // Calls f(value) for each value, front to back; f returns false to stop.
  template <typename F>
  void ForEachWhile(F&& f) const {
    for (size_t i = 0; i < size_; ++i) {
      if (!f(data_[Slot(i)])) {
        return;
      }
    }
  }

 private:
  size_t Slot(size_t i) const {
    const size_t at = head_ + i;
    return at < capacity_ ? at : at - capacity_;
  }

  void Grow() {
    const size_t capacity = capacity_ == 0 ? 16 : capacity_ * 2;
    auto data = std::make_unique_for_overwrite<T[]>(capacity);
    for (size_t i = 0; i < size_; ++i) {
      data[i] = data_[Slot(i)];
    }
    data_ = std::move(data);
    capacity_ = capacity;
    head_ = 0;
  }

  std::unique_ptr<T[]> data_;
  size_t capacity_ = 0;
  size_t head_ = 0;  // the front's slot
  size_t size_ = 0;
};

}  // namespace ferry
