// CRC-32 (IEEE 802.3, as zlib and PNG compute it): the checksum of checkpoint files and of
// the controller's journal records and snapshots.
// crc32("123456789") == 0xCBF43926.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace sia {

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace sia
