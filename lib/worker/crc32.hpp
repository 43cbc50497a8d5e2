// CRC-32 (IEEE 802.3, as zlib and PNG compute it): the checksum of checkpoint files.
// crc32("123456789") == 0xCBF43926.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace sia::worker {

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace sia::worker
