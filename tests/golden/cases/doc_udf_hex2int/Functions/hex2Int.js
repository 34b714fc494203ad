function hex2Int(hexValue){
    return parseInt(hexValue, 16);
}
