// Keras-style progress lines of the trainer.
#include <gtest/gtest.h>

#include <sstream>

#include "progress.hpp"

namespace batchai::train {
namespace {

TEST(Progress, LineLooksLikeKeras) {
  EXPECT_EQ(progress_line(32, 1563, 83, 2.2871, 0.125),
            "  32/1563 [..............................] - ETA: 1:23 - loss: 2.2871 - acc: 0.1250");
  EXPECT_EQ(progress_bar(782, 1563), "[==============>...............]");
  EXPECT_EQ(progress_bar(1563, 1563), "[==============================]");
}

TEST(Progress, EpochEndLine) {
  EXPECT_EQ(epoch_end_line(1563, 60, 1.5, 0.45, 1.2, 0.56),
            "1563/1563 [==============================] - 60s 38ms/step - loss: 1.5000 - acc: 0.4500 - "
            "val_loss: 1.2000 - val_acc: 0.5600");
  EXPECT_EQ(epoch_end_line(10, 1, 1.5, 0.45, -1, -1),
            "10/10 [==============================] - 1s 100ms/step - loss: 1.5000 - acc: 0.4500");
}

TEST(Progress, EtaFormats) {
  EXPECT_EQ(format_eta(45.2), "45s");
  EXPECT_EQ(format_eta(83), "1:23");
  EXPECT_EQ(format_eta(3723), "1:02:03");
}

TEST(Progress, PrinterWritesLinesWhenNotATerminal) {
  std::ostringstream out;
  ProgressPrinter p(out, false, 1000.0, true);
  p.begin_epoch(1, 25, 3);
  p.update(1, 2.3, 0.1);
  p.update(2, 2.2, 0.2);  // within the interval: not printed
  p.end_epoch(2.1, 0.3, 2.0, 0.35);
  const std::string s = out.str();
  EXPECT_EQ(s.find("Epoch 1/25\n"), 0u);
  EXPECT_NE(s.find("1/3 [=========>....................] - ETA: "), std::string::npos) << s;
  EXPECT_EQ(s.find("2/3 ["), std::string::npos);
  EXPECT_NE(s.find("3/3 [==============================] - "), std::string::npos);
  EXPECT_EQ(s.find('\r'), std::string::npos);
}

TEST(Progress, PrinterRewritesInPlaceOnATerminal) {
  std::ostringstream out;
  ProgressPrinter p(out, true, 5.0, true);
  p.begin_epoch(2, 2, 4);
  p.update(1, 2.3, 0.1);
  p.end_epoch(2.1, 0.3, -1, -1);
  EXPECT_NE(out.str().find("\r1/4 ["), std::string::npos);
  EXPECT_NE(out.str().find("\r4/4 ["), std::string::npos);
}

}  // namespace
}  // namespace batchai::train
