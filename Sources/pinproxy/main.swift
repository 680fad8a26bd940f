import PinproxyCore
import PinproxyRuntime

print("pinproxy")
