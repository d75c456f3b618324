// The offer SDK for C# engine plugins: a thin P/Invoke layer over the C ABI of liboffer_sdk
// (sdk/include/offer_sdk.h). Nothing is reimplemented here: every call goes to the native
// library, and the seven callbacks of the C ABI (SVC_Dart_OnSDKReady, ...) are raised as the C#
// events of the same names (OnSDKReady, ...), on the thread that calls Poll(): the game's main
// loop, once a frame. Each event carries the callback's JSON payload as a string.
//
// Strings cross the boundary as NUL-terminated UTF-8 in both directions, encoded and decoded
// here, so the result does not depend on the runtime's default string marshalling.

using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace Offer
{
    /// <summary>The result of every SDK call: Ok (0) or a negative error code, as in the
    /// C header.</summary>
    public enum SvcResult
    {
        Ok = 0,
        NullArgument = -1,
        InvalidUtf8 = -2,
        InvalidConfig = -3,
        NotAnSdkKey = -4,
        EnvironmentMismatch = -5,
        BaseUrl = -6,
        SvcConfig = -7,
        PlayerId = -8,
        DataDir = -9,
        Thread = -10,
        NotInitialised = -11,
        AlreadyInitialised = -12,
        InvalidEvent = -13,
        SdkOff = -14,
        AlreadyLoggedIn = -15,
        Internal = -16,
        EventTooLarge = -17,
        QueueFull = -18,
        PlayerToken = -19,
        UnknownCallback = -20,
    }

    /// <summary>The SDK: one per process, as the native library keeps one.</summary>
    public static class OfferSdk
    {
        const string Library = "offer_sdk";

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        delegate void NativeCallback(IntPtr json, IntPtr userData);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_Init(byte[] configJson);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_Login(byte[] playerId);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_LoginWithToken(byte[] playerToken);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetPlayerToken(byte[] playerToken);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_Track(byte[] eventJson);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_RequestOffer(byte[] eventType);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_Poll();
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_Shutdown();
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnSDKReady(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnOfferReceived(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnBalanceUpdate(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnInventoryUpdate(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnNoOffer(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnKillSwitchChanged(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnConfigUpdated(NativeCallback callback, IntPtr userData);
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        static extern int SVC_SetOnPlayerTokenNeeded(NativeCallback callback, IntPtr userData);

        /// <summary>SVC_Dart_OnSDKReady: the session is open. JSON: resumed, kill_switch, mode,
        /// config_version, inventory.</summary>
        public static event Action<string> OnSDKReady;
        /// <summary>SVC_Dart_OnOfferReceived: an offer to show (the engine's offer JSON).</summary>
        public static event Action<string> OnOfferReceived;
        /// <summary>SVC_Dart_OnBalanceUpdate: a wallet balance. JSON: currency_id, balance.</summary>
        public static event Action<string> OnBalanceUpdate;
        /// <summary>SVC_Dart_OnInventoryUpdate: the whole inventory. JSON: inventory.</summary>
        public static event Action<string> OnInventoryUpdate;
        /// <summary>SVC_Dart_OnNoOffer: no offer for the moment. JSON: outcome.</summary>
        public static event Action<string> OnNoOffer;
        /// <summary>SVC_Dart_OnKillSwitchChanged. JSON: level, reason, updated_at.</summary>
        public static event Action<string> OnKillSwitchChanged;
        /// <summary>SVC_Dart_OnConfigUpdated. JSON: config_version, custom_page.</summary>
        public static event Action<string> OnConfigUpdated;
        /// <summary>SVC_Dart_OnPlayerTokenNeeded: the SDK needs a new player token (ask the
        /// studio's backend, then call SetPlayerToken). JSON: reason (expiring or refused),
        /// player_id, expires_at, and for refused the engine's code and message.</summary>
        public static event Action<string> OnPlayerTokenNeeded;

        // The delegates handed to the native library, kept here so the garbage collector never
        // frees one the library still calls.
        static readonly List<NativeCallback> Registered = new List<NativeCallback>();
        static bool registeredAll;

        /// <summary>Registers the native callbacks (the seven of the engine's pushes and the
        /// player token's), each raising its event (the native
        /// library logs one registration line per callback). Init calls it; a game that wants
        /// the registrations logged before anything else calls it first thing at launch.
        /// Returns Ok, or the first failing registration's code.</summary>
        public static SvcResult RegisterCallbacks()
        {
            if (registeredAll)
            {
                return SvcResult.Ok;
            }
            var registrations = new Func<NativeCallback, IntPtr, int>[]
            {
                SVC_SetOnSDKReady, SVC_SetOnOfferReceived, SVC_SetOnBalanceUpdate,
                SVC_SetOnInventoryUpdate, SVC_SetOnNoOffer, SVC_SetOnKillSwitchChanged,
                SVC_SetOnConfigUpdated, SVC_SetOnPlayerTokenNeeded,
            };
            var raisers = new Action<string>[]
            {
                json => Raise(OnSDKReady, json), json => Raise(OnOfferReceived, json),
                json => Raise(OnBalanceUpdate, json), json => Raise(OnInventoryUpdate, json),
                json => Raise(OnNoOffer, json), json => Raise(OnKillSwitchChanged, json),
                json => Raise(OnConfigUpdated, json), json => Raise(OnPlayerTokenNeeded, json),
            };
            for (int i = 0; i < registrations.Length; i++)
            {
                Action<string> raise = raisers[i];
                NativeCallback callback = (json, userData) => raise(FromUtf8(json));
                Registered.Add(callback);
                int code = registrations[i](callback, IntPtr.Zero);
                if (code != 0)
                {
                    return (SvcResult)code;
                }
            }
            registeredAll = true;
            return SvcResult.Ok;
        }

        /// <summary>Starts the SDK and returns at once (SVC_Init): configJson is the SDK
        /// configuration (api_key, game_id, environment, base_url) with the optional data_dir,
        /// player_id, session_id, advertising_id and player_token (the player's token signed by
        /// the studio's backend). A null configJson is NullArgument.</summary>
        public static SvcResult Init(string configJson)
        {
            SvcResult registered = RegisterCallbacks();
            if (registered != SvcResult.Ok)
            {
                return registered;
            }
            return (SvcResult)SVC_Init(ToUtf8(configJson));
        }

        /// <summary>Opens the session for playerId when svc_config.json has auto_login false.</summary>
        public static SvcResult Login(string playerId)
        {
            return (SvcResult)SVC_Login(ToUtf8(playerId));
        }

        /// <summary>Opens the session for the player the token names (its sub), sending the
        /// token, when svc_config.json has auto_login false. PlayerToken when it does not
        /// read.</summary>
        public static SvcResult LoginWithToken(string playerToken)
        {
            return (SvcResult)SVC_LoginWithToken(ToUtf8(playerToken));
        }

        /// <summary>Gives the SDK the player's new token, the answer to OnPlayerTokenNeeded:
        /// what waited for a token resumes with it. PlayerToken when it does not read or names
        /// another player.</summary>
        public static SvcResult SetPlayerToken(string playerToken)
        {
            return (SvcResult)SVC_SetPlayerToken(ToUtf8(playerToken));
        }

        /// <summary>Queues an event given as the engine's event JSON. EventTooLarge when it is
        /// longer than the engine takes; QueueFull for a money event when 100,000 of them wait
        /// already (keep it and track it later). A purchase carries the store's receipt as the
        /// store's SDK handed it over, in "receipt", passed through untouched: for Unity IAP
        /// {"store":"unity","receipt":product.receipt}; for StoreKit 2
        /// {"store":"app_store","signed_transaction":jwsRepresentation}; for Google Play Billing
        /// {"store":"google_play","purchase_data":purchase.OriginalJson,"signature":purchase.Signature}.
        /// A game that checks receipts grants only what the receipt proves.</summary>
        public static SvcResult Track(string eventJson)
        {
            return (SvcResult)SVC_Track(ToUtf8(eventJson));
        }

        /// <summary>Asks for an offer for the moment eventType (first_loss, boss_raid, ...).</summary>
        public static SvcResult RequestOffer(string eventType)
        {
            return (SvcResult)SVC_RequestOffer(ToUtf8(eventType));
        }

        /// <summary>Raises every waiting event on the calling thread (call it once a frame);
        /// returns how many ran, or NotInitialised as a negative number.</summary>
        public static int Poll()
        {
            return SVC_Poll();
        }

        /// <summary>Stops the SDK; what is queued is kept on disk for the next run.</summary>
        public static SvcResult Shutdown()
        {
            return (SvcResult)SVC_Shutdown();
        }

        static void Raise(Action<string> handlers, string json)
        {
            if (handlers != null)
            {
                handlers(json);
            }
        }

        /// <summary>NUL-terminated UTF-8, or null (a null pointer for the library).</summary>
        static byte[] ToUtf8(string text)
        {
            if (text == null)
            {
                return null;
            }
            byte[] bytes = new byte[Encoding.UTF8.GetByteCount(text) + 1];
            Encoding.UTF8.GetBytes(text, 0, text.Length, bytes, 0);
            return bytes;
        }

        /// <summary>The NUL-terminated UTF-8 string at ptr, valid during the callback only.</summary>
        static string FromUtf8(IntPtr ptr)
        {
            if (ptr == IntPtr.Zero)
            {
                return null;
            }
            int length = 0;
            while (Marshal.ReadByte(ptr, length) != 0)
            {
                length++;
            }
            byte[] bytes = new byte[length];
            Marshal.Copy(ptr, bytes, 0, length);
            return Encoding.UTF8.GetString(bytes);
        }
    }
}
