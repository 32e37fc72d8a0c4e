#include "kernels/common/datatype.h"

#include <strings.h>

namespace strata {

size_t dataTypeSize(DataType t) {
  switch (t) {
    case strataInt8:
    case strataUint8: return 1;
    case strataFloat16:
    case strataBfloat16: return 2;
    case strataInt32:
    case strataUint32:
    case strataFloat32: return 4;
    case strataInt64:
    case strataUint64:
    case strataFloat64: return 8;
    default: return 0;
  }
}

const char* dataTypeName(DataType t) {
  switch (t) {
    case strataInt8: return "int8";
    case strataUint8: return "uint8";
    case strataInt32: return "int32";
    case strataUint32: return "uint32";
    case strataInt64: return "int64";
    case strataUint64: return "uint64";
    case strataFloat16: return "half";
    case strataFloat32: return "float";
    case strataFloat64: return "double";
    case strataBfloat16: return "bfloat16";
    default: return "invalid";
  }
}

const char* redOpName(RedOp op) {
  switch (op) {
    case strataSum: return "sum";
    case strataProd: return "prod";
    case strataMax: return "max";
    case strataMin: return "min";
    case strataAvg: return "avg";
    default: return "invalid";
  }
}

bool isFloatingType(DataType t) {
  return t == strataFloat16 || t == strataFloat32 || t == strataFloat64 || t == strataBfloat16;
}

bool parseDataType(const char* name, DataType* out) {
  struct Alias {
    const char* name;
    DataType type;
  };
  static const Alias kAliases[] = {
      {"int8", strataInt8},       {"char", strataInt8},         {"uint8", strataUint8},
      {"int32", strataInt32},     {"int", strataInt32},         {"uint32", strataUint32},
      {"int64", strataInt64},     {"uint64", strataUint64},     {"half", strataFloat16},
      {"float16", strataFloat16}, {"fp16", strataFloat16},      {"float", strataFloat32},
      {"float32", strataFloat32}, {"fp32", strataFloat32},      {"double", strataFloat64},
      {"float64", strataFloat64}, {"fp64", strataFloat64},      {"bfloat16", strataBfloat16},
      {"bf16", strataBfloat16},
  };
  if (name == nullptr) return false;
  for (const Alias& a : kAliases) {
    if (strcasecmp(name, a.name) == 0) {
      *out = a.type;
      return true;
    }
  }
  return false;
}

bool parseRedOp(const char* name, RedOp* out) {
  if (name == nullptr) return false;
  for (int op = 0; op < kNumRedOps; ++op) {
    if (strcasecmp(name, redOpName(static_cast<RedOp>(op))) == 0) {
      *out = static_cast<RedOp>(op);
      return true;
    }
  }
  return false;
}

}  // namespace strata
