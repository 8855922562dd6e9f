// The ranges of --part I/K and a part's record (src/app/common/part_range, part_record).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "app/common/part_range.hpp"
#include "app/common/part_record.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::app {
namespace {

TEST(PartRange, ParsesIOfKAndRefusesTheRest) {
  const PartSpec p = parse_part("3/8");
  EXPECT_EQ(p.index, 3);
  EXPECT_EQ(p.count, 8);
  EXPECT_TRUE(p.given());
  EXPECT_FALSE(PartSpec{}.given());
  EXPECT_EQ(parse_part("1/1").count, 1);
  EXPECT_EQ(parse_part("100000/100000").index, 100000);
  for (const char* bad : {"", "3", "3/", "/8", "0/8", "9/8", "3/0", "-1/8", "3/-8", "3/8/2", "a/8",
                          "3/b", " 3/8", "3/8 ", "+3/8", "3.0/8", "1/100001", "1234567890/2"})
    EXPECT_THROW(parse_part(bad), UsageError) << bad;
}

// The K ranges tile the frames once, in order, sizes differing by at most one, for every K up
// to the frame count; the same from any start and length.
TEST(PartRange, TheKRangesTileTheWhole) {
  for (std::int64_t total : {1, 2, 3, 7, 37, 120, 1691})
    for (std::int64_t start : {std::int64_t(0), std::int64_t(1), total / 3})
      for (std::int64_t frames : {std::int64_t(-1), std::int64_t(5), total}) {
        if (start >= total) continue;
        const std::int64_t n = frames < 0 ? total - start : std::min(frames, total - start);
        for (int k = 1; k <= std::min<std::int64_t>(n, 40); ++k) {
          std::int64_t next = start, smallest = n, largest = 0;
          for (int i = 1; i <= k; ++i) {
            const PartPlan plan = plan_part(PartSpec{i, k}, total, start, frames, "in");
            EXPECT_EQ(plan.total, total);
            EXPECT_EQ(plan.whole.first, start);
            EXPECT_EQ(plan.whole.count, n);
            ASSERT_EQ(plan.range.first, next) << total << " " << start << " " << frames << " " << i << "/" << k;
            ASSERT_GE(plan.range.count, 1);
            next = plan.range.end();
            smallest = std::min(smallest, plan.range.count);
            largest = std::max(largest, plan.range.count);
          }
          EXPECT_EQ(next, start + n);
          EXPECT_LE(largest - smallest, 1);
        }
      }
}

TEST(PartRange, EmptyPartsAndRangesPastTheEndAreErrors) {
  EXPECT_THROW(plan_part(PartSpec{5, 8}, 4, 0, -1, "in"), Error);
  EXPECT_NO_THROW(plan_part(PartSpec{4, 4}, 4, 0, -1, "in"));
  EXPECT_THROW(plan_part(PartSpec{1, 2}, 4, 4, -1, "in"), Error);
  EXPECT_THROW(plan_part(PartSpec{1, 3}, 10, 2, 2, "in"), Error);  // 2 frames, 3 parts: the first empty
  try {
    plan_part(PartSpec{5, 8}, 4, 0, -1, "in");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 frames make at most 4 parts, so part 5 has none"),
              std::string::npos)
        << e.what();
  }
}

TEST(PartRecord, TextRoundTripAndDamage) {
  PartRecord r;
  r.part = PartSpec{2, 4};
  r.range = FrameRange{30, 30};
  r.whole = FrameRange{0, 120};
  r.fields = {{"part", "2/4"},        {"frames", "30..59"}, {"of", "0..119"},
              {"source", "clip.mp4"}, {"size", "640x360"},  {"jpeg", "quality 90, sampling 420"}};
  const std::string text = r.text();
  EXPECT_EQ(text.rfind(std::string(kPartRecordHeader) + "\n", 0), 0u);
  const PartRecord back = PartRecord::parse(text);
  EXPECT_EQ(back.fields, r.fields);
  EXPECT_EQ(back.part.index, 2);
  EXPECT_EQ(back.part.count, 4);
  EXPECT_EQ(back.range.first, 30);
  EXPECT_EQ(back.range.count, 30);
  EXPECT_EQ(back.whole.count, 120);
  EXPECT_EQ(back.get("size"), "640x360");
  EXPECT_EQ(back.get("nothing"), "");
  EXPECT_THROW(PartRecord::parse("something else\npart: 2/4\n"), Error);
  for (const char* bad : {"part: 5/4\nframes: 30..59\nof: 0..119\n",
                          "part: 2/4\nframes: 30..29x\nof: 0..119\n",
                          "part: 2/4\nframes: 30..59\nof: 40..119\n",   // range outside the whole
                          "part: 2/4\nframes: 30..59\n",                 // no whole
                          "part: 2/4\nframes 30..59\nof: 0..119\n"})     // no ": "
    EXPECT_THROW(PartRecord::parse(std::string(kPartRecordHeader) + "\n" + bad), Error) << bad;
}

TEST(PartRecord, TagsComeBackExactly) {
  // Any text a source's tags hold survives the record's one line: the separators, '%', line
  // breaks, UTF-8 and bytes that are no UTF-8 at all; an empty list is an empty line.
  const std::vector<std::pair<std::string, std::string>> tags = {
      {"title", "A, B=C 100% \xC3\xA9"},
      {"comment", "line one\nline two\r\tend"},
      {"artist", std::string("\xFF\x01\x00x", 4)},
      {"genre", ""},
      {"k=ey,", ", "}};
  const std::string line = tags_text(tags);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(parse_tags(line), tags) << line;
  EXPECT_EQ(tags_text({}), "");
  EXPECT_TRUE(parse_tags("").empty());
  // The record carries it as one field like the others.
  PartRecord r = PartRecord::parse(std::string(kPartRecordHeader) +
                                   "\npart: 1/2\nframes: 0..4\nof: 0..9\ntags: " + line + "\n");
  EXPECT_EQ(parse_tags(r.get("tags")), tags);
  for (const char* bad : {"title", "title=%", "title=%4", "title=%zz", "title=%4g"})
    EXPECT_THROW(parse_tags(bad), Error) << bad;
}

}  // namespace
}  // namespace mjpeg::app
