// The byte comparison of the exactness tests, for EXPECT_TRUE / ASSERT_TRUE.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/oracle.hpp"

namespace mjpeg::test {

/// Success when both hold the same bytes (sizes compared first); otherwise the failure names
/// the sizes and the first differing offset with its JPEG segment (describe_difference).
inline ::testing::AssertionResult same_bytes(const std::vector<std::uint8_t>& ours,
                                             const std::vector<std::uint8_t>& reference) {
  if (ours == reference) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe_difference(ours, reference);
}

}  // namespace mjpeg::test
